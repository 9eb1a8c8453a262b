package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// fakeProvider answers each request with a function of it.
type fakeProvider struct {
	mu    sync.Mutex
	reqs  []llm.Request
	reply func(req *llm.Request) *llm.Reply
}

func (p *fakeProvider) Name() string { return "fake" }
func (p *fakeProvider) Stream(ctx context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Reply, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, *req)
	p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.reply(req), nil
}

func text(s string) *llm.Reply {
	return &llm.Reply{Message: llm.Text(llm.RoleAssistant, s), StopReason: llm.StopEnd, Usage: llm.Usage{Input: 10, Output: 5}}
}

func toolCall(id, name, input string) *llm.Reply {
	return &llm.Reply{
		Message:    llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}}},
		StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 10, Output: 5},
	}
}

// lastResult is the content of the newest tool result in req.
func lastResult(req *llm.Request) (string, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for _, b := range req.Messages[i].Blocks {
			if b.Type == llm.BlockToolResult {
				return b.Content, true
			}
		}
	}
	return "", false
}

type env struct {
	project string
	main    *tools.Registry
	log     *sessionlog.Log
	logPath string
}

func newEnv(t *testing.T, extra ...tools.Tool) *env {
	t.Helper()
	proj := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	te := &tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(p)}}
	all := append(tools.Builtins(te), &tools.WriteTodos{List: &tools.TodoList{}})
	all = append(all, extra...)
	allowAll := tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" })
	logPath := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "s1", Project: p.Project()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &env{project: p.Project(), main: tools.NewRegistry(allowAll, all...), log: l, logPath: logPath}
}

func (e *env) config(p llm.Provider, usage *llm.Usage, mu *sync.Mutex) Config {
	return Config{
		Provider: p, Model: "m", System: "SUB", Tools: e.main, Log: e.log,
		Gate:     tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }),
		AddUsage: func(u llm.Usage) { mu.Lock(); *usage = usage.Add(u); mu.Unlock() },
	}
}

func TestReadOnlyToolSet(t *testing.T) {
	jobs := &tools.Jobs{}
	e := newEnv(t, &tools.BashOutput{Jobs: jobs}, &tools.BashStop{Jobs: jobs})
	if e.main.Lookup("bash_output") == nil || e.main.Lookup("bash_stop") == nil {
		t.Fatal("the main registry lacks the job tools the test removes")
	}
	task := New(Config{Tools: e.main})
	got := strings.Join(task.Tools().Names(), ",")
	// The none backend cannot hold the project read-only: no bash.
	if got != "glob,grep,read_file" {
		t.Fatalf("sub-agent tools = %s", got)
	}
	if d := task.Spec().Description; !strings.Contains(d, "has no bash") {
		t.Errorf("the description does not say there is no bash: %s", d)
	}
	for _, name := range Forbidden {
		if task.Tools().Lookup(name) != nil {
			t.Errorf("%s is in the sub-agent's registry", name)
		}
	}
	// The main registry is untouched.
	if e.main.Lookup("write_file") == nil {
		t.Fatal("ReadOnly changed the main registry")
	}
}

func TestSubAgentWriteIsRefused(t *testing.T) {
	e := newEnv(t)
	target := filepath.Join(e.project, "pwned.txt")
	var mu sync.Mutex
	var usage llm.Usage
	p := &fakeProvider{}
	p.reply = func(req *llm.Request) *llm.Reply {
		res, ok := lastResult(req)
		switch {
		case !ok:
			return toolCall("w1", "write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, target))
		case strings.Contains(res, "unknown tool \"write_file\""):
			return toolCall("e1", "edit_file", `{"path":"a","old_string":"x","new_string":"y"}`)
		case strings.Contains(res, "unknown tool \"edit_file\""):
			return text("REPORT: I could not write: " + res)
		}
		return text("unexpected result: " + res)
	}
	task := New(e.config(p, &usage, &mu))
	out := task.Run(t.Context(), json.RawMessage(`{"description":"try to write","prompt":"write pwned.txt"}`))
	if out.IsError || !strings.HasPrefix(out.Content, "REPORT: I could not write") {
		t.Fatalf("result = %+v", out)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the sub-agent wrote %s (stat err %v)", target, err)
	}
	if usage != (llm.Usage{Input: 30, Output: 15}) {
		t.Fatalf("usage counted into the session = %+v, want 3 requests' worth", usage)
	}
	for _, r := range p.reqs {
		if r.System != "SUB" {
			t.Fatalf("sub-agent request with system %q", r.System)
		}
		for _, tl := range r.Tools {
			if tl.Name == "write_file" || tl.Name == "task" {
				t.Fatalf("the sub-agent was offered %s", tl.Name)
			}
		}
	}

	// Everything it did is in the log under its label, and a resume does
	// not replay it into the main history.
	e.log.Close()
	entries, err := sessionlog.ReadFile(e.logPath)
	if err != nil {
		t.Fatal(err)
	}
	labelled := 0
	for _, en := range entries[1:] {
		if en.Agent != "task-1" {
			t.Fatalf("entry %+v is not labelled", en)
		}
		if en.Type == sessionlog.TypeMessage {
			labelled++
		}
	}
	if labelled != 6 { // prompt, 3 replies, 2 results
		t.Fatalf("%d labelled messages, want 6", labelled)
	}
	h := history.New(history.Config{})
	total, err := agent.Restore(h, entries)
	if err != nil || h.Len() != 0 || total.Input != 30 {
		t.Fatalf("restore: %d messages, total %+v, err %v", h.Len(), total, err)
	}
}

// scribble is a write tool a future change might add without listing it in
// Forbidden: the read-only gate still refuses it.
type scribble struct{ ran bool }

func (s *scribble) Spec() llm.Tool { return llm.Tool{Name: "scribble"} }
func (s *scribble) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Tool: "scribble", Path: "/p/x", Write: true}, nil
}
func (s *scribble) Run(context.Context, json.RawMessage) tools.Result {
	s.ran = true
	return tools.Result{}
}

func TestGateRefusesUnlistedWriteTools(t *testing.T) {
	sc := &scribble{}
	e := newEnv(t, sc)
	var mu sync.Mutex
	var usage llm.Usage
	p := &fakeProvider{}
	p.reply = func(req *llm.Request) *llm.Reply {
		if res, ok := lastResult(req); ok {
			return text("got: " + res)
		}
		return toolCall("s1", "scribble", `{}`)
	}
	out := New(e.config(p, &usage, &mu)).Run(t.Context(), json.RawMessage(`{"description":"d","prompt":"scribble"}`))
	if sc.ran || !strings.Contains(out.Content, "sub-agents are read-only") {
		t.Fatalf("ran %v, result %+v", sc.ran, out)
	}
}

func TestStepLimit(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var usage llm.Usage
	p := &fakeProvider{}
	n := 0
	p.reply = func(req *llm.Request) *llm.Reply {
		n++
		r := toolCall(fmt.Sprintf("g%d", n), "glob", `{"pattern":"*"}`)
		r.Message.Blocks = append([]llm.Block{{Type: llm.BlockText, Text: fmt.Sprintf("still looking (%d)", n)}}, r.Message.Blocks...)
		return r
	}
	c := e.config(p, &usage, &mu)
	c.MaxSteps = 3
	out := New(c).Run(t.Context(), json.RawMessage(`{"description":"d","prompt":"look forever"}`))
	if out.IsError || !strings.HasPrefix(out.Content, "still looking (3)") || !strings.Contains(out.Content, "hit its limit of 3 steps") {
		t.Fatalf("result = %+v", out)
	}
	if usage.Input != 30 {
		t.Fatalf("usage = %+v", usage)
	}
}

func TestBadArguments(t *testing.T) {
	task := New(Config{Tools: newEnv(t).main})
	r := tools.NewRegistry(tools.GateFunc(allowAll), task)
	res := r.Run(t.Context(), llm.Block{Type: llm.BlockToolUse, ID: "x", Name: "task", Input: json.RawMessage(`{"description":"d"}`)})
	if !res.IsError || !strings.Contains(res.Content, `missing required argument "prompt"`) {
		t.Fatalf("result = %+v", res)
	}
}

// TestParallelTasks runs a main agent whose reply holds two task calls: the
// sub-agents' requests wait for each other, so the test only passes when
// the two run concurrently.
func TestParallelTasks(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var usage llm.Usage
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	p := &fakeProvider{}
	p.reply = func(req *llm.Request) *llm.Reply {
		if req.System == "SUB" {
			arrived.Done()
			select {
			case <-both:
			case <-time.After(30 * time.Second): // a deadlock guard, not a timing assertion
				return text("the other sub-agent never started")
			}
			return text("report for " + req.Messages[0].PlainText())
		}
		if _, ok := lastResult(req); ok {
			return text("main done")
		}
		r := toolCall("t1", "task", `{"description":"a","prompt":"A"}`)
		r.Message.Blocks = append(r.Message.Blocks, llm.Block{Type: llm.BlockToolUse, ID: "t2", Name: "task", Input: json.RawMessage(`{"description":"b","prompt":"B"}`)})
		return r
	}
	var main *agent.Agent
	c := e.config(p, &usage, &mu)
	c.AddUsage = func(u llm.Usage) { main.AddUsage(u) }
	task := New(c)
	main = agent.New(agent.Options{Provider: p, Model: "m", System: "MAIN", Tools: e.main.With(task), History: history.New(history.Config{}), Log: e.log})
	res, err := main.Run(t.Context(), "go", nil)
	if err != nil || res.Text != "main done" {
		t.Fatalf("res %+v, err %v", res, err)
	}
	// 2 main requests + 2 sub-agent requests, all counted.
	if got := main.Usage().Input; got != 40 {
		t.Fatalf("session usage input = %d, want 40", got)
	}
	msgs := main.History().Messages()
	results := msgs[2].Blocks
	if len(results) != 2 || results[0].Content != "report for A" || results[1].Content != "report for B" {
		t.Fatalf("results = %+v", results)
	}
}

// TestSubAgentBashIsReadOnly: under real walls a sub-agent's bash reads the
// project and cannot write it (asserted on the host); the description says so.
func TestSubAgentBashIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "harness-subagent-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "keep.txt"), []byte("original"), 0o644)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+err.Error())
	}
	t.Cleanup(func() { sb.Close() })
	jobs := &tools.Jobs{Sandbox: sb}
	t.Cleanup(jobs.Close)
	te := &tools.Env{Sandbox: sb, Jobs: jobs}
	main := tools.NewRegistry(tools.GateFunc(allowAll), append(tools.Builtins(te), &tools.BashOutput{Jobs: jobs}, &tools.BashStop{Jobs: jobs})...)
	task := New(Config{Tools: main})
	if !task.HasBash() || !strings.Contains(task.Spec().Description, "cannot write the project") {
		t.Fatalf("no read-only bash: %v / %s", task.Tools().Names(), task.Spec().Description)
	}
	// Background commands are the main agent's: the sub-agent's bash
	// offers no flag and refuses one, and it gets no job tools.
	if !strings.Contains(string(main.Lookup("bash").Spec().Schema), `"background"`) {
		t.Fatal("the main bash does not offer background")
	}
	if spec := task.Tools().Lookup("bash").Spec(); strings.Contains(string(spec.Schema), "background") || strings.Contains(spec.Description, "background") {
		t.Errorf("the sub-agent's bash offers background commands: %s", spec.Schema)
	}
	res := task.Tools().Run(context.Background(), llm.Block{Type: llm.BlockToolUse, ID: "0", Name: "bash",
		Input: json.RawMessage(`{"command":"sleep 600","background":true}`)})
	if !res.IsError || !strings.Contains(res.Content, "not available here") || len(jobs.List()) != 0 {
		t.Errorf("a sub-agent started a background command: %+v, jobs %+v", res, jobs.List())
	}
	for _, name := range []string{"bash_output", "bash_stop"} {
		if task.Tools().Lookup(name) != nil {
			t.Errorf("the sub-agent has %s", name)
		}
	}
	res = task.Tools().Run(context.Background(), llm.Block{Type: llm.BlockToolUse, ID: "1", Name: "bash",
		Input: json.RawMessage(`{"command":"cat keep.txt; echo pwned > keep.txt; echo pwned > new.txt; echo tmp > /tmp/x && cat /tmp/x"}`)})
	if !strings.Contains(res.Content, "original") || !strings.Contains(res.Content, "tmp") {
		t.Errorf("the sub-agent's bash could not read the project or write /tmp: %s", res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "keep.txt")); string(b) != "original" {
		t.Errorf("the sub-agent's bash wrote the project: %s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(proj, "new.txt")); err == nil {
		t.Errorf("the sub-agent's bash created a file in the project")
	}
	// The main agent's bash still writes.
	res = main.Run(context.Background(), llm.Block{Type: llm.BlockToolUse, ID: "2", Name: "bash", Input: json.RawMessage(`{"command":"echo ok > new.txt"}`)})
	if b, _ := os.ReadFile(filepath.Join(proj, "new.txt")); string(b) != "ok\n" {
		t.Errorf("the main bash cannot write: %s", res.Content)
	}
}

// allowAll is the gate of tests that check nothing.
func allowAll(context.Context, tools.Access) (bool, string) { return true, "" }
