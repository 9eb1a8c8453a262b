package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// scripted is an in-memory provider: each call pops the next step. The wire
// formats are tested end to end in package cli against the fake server; here
// the loop's logic is under test.
type scripted struct {
	mu    sync.Mutex
	steps []func(req *llm.Request) (*llm.Reply, error)
	reqs  []*llm.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(ctx context.Context, req *llm.Request, on func(llm.Event)) (*llm.Reply, error) {
	s.mu.Lock()
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, &cp)
	if len(s.steps) == 0 {
		s.mu.Unlock()
		return nil, errors.New("script exhausted")
	}
	step := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	r, err := step(req)
	if r != nil && on != nil {
		if t := r.Message.PlainText(); t != "" {
			on(llm.Event{Type: llm.EventText, Text: t})
		}
	}
	return r, err
}

func text(s string) func(*llm.Request) (*llm.Reply, error) {
	return func(*llm.Request) (*llm.Reply, error) {
		return &llm.Reply{Message: llm.Text(llm.RoleAssistant, s), StopReason: llm.StopEnd, Usage: llm.Usage{Input: 100, Output: 10}}, nil
	}
}

func toolCalls(calls ...llm.Block) func(*llm.Request) (*llm.Reply, error) {
	return func(*llm.Request) (*llm.Reply, error) {
		return &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant, Blocks: calls}, StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 100, Output: 10}}, nil
	}
}

func use(id, name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

type fixture struct {
	agent *Agent
	prov  *scripted
	proj  string
	log   string
	hist  *history.History
}

func newFixture(t *testing.T, steps ...func(*llm.Request) (*llm.Reply, error)) *fixture {
	t.Helper()
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}}
	logPath := filepath.Join(t.TempDir(), "s.jsonl")
	lg, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	h := history.New(history.Config{SpillDir: t.TempDir()})
	p := &scripted{steps: steps}
	a := New(Options{Provider: p, Model: "m", System: "sys", Tools: tools.NewRegistry(tools.GateFunc(allowAll), tools.Builtins(env)...), History: h, Log: lg, MaxSteps: 10})
	return &fixture{agent: a, prov: p, proj: pol.Project(), log: logPath, hist: h}
}

func TestLoopRunsToolsUntilAnswer(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "write_file", `{"path":"hello.txt","content":"hi\n"}`), use("2", "bash", `{"command":"cat hello.txt"}`)),
		text("done"),
	)
	res, err := f.agent.Run(context.Background(), "make hello.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || res.Steps != 2 || res.Usage.Input != 200 {
		t.Errorf("result %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(f.proj, "hello.txt")); string(b) != "hi\n" {
		t.Errorf("file = %q", b)
	}
	second := f.prov.reqs[1].Messages
	last := second[len(second)-1]
	if len(last.Blocks) != 2 || last.Blocks[0].ToolUseID != "1" || last.Blocks[1].Content != "hi\n[exit code: 0]" {
		t.Errorf("tool results sent back: %+v", last)
	}
}

func TestToolFailuresBecomeResults(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "nope", `{}`), use("2", "bash", `{"command": `), use("3", "read_file", `{}`)),
		text("ok"),
	)
	if _, err := f.agent.Run(context.Background(), "x", nil); err != nil {
		t.Fatal(err)
	}
	results := f.prov.reqs[1].Messages[2].Blocks
	for i, want := range []string{"unknown tool", "not valid JSON", "missing required argument"} {
		if !results[i].IsError || !strings.Contains(results[i].Content, want) {
			t.Errorf("result %d = %+v, want %q", i, results[i], want)
		}
	}
}

func TestStepLimit(t *testing.T) {
	var steps []func(*llm.Request) (*llm.Reply, error)
	for range 20 {
		steps = append(steps, toolCalls(use("x", "bash", `{"command":"true"}`)))
	}
	f := newFixture(t, steps...)
	res, err := f.agent.Run(context.Background(), "loop forever", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HitStepLimit || res.Steps != 10 {
		t.Errorf("result %+v, want the limit of 10 steps hit", res)
	}
}

func TestProviderErrorKeepsCompletedMessages(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"echo one"}`)),
		func(*llm.Request) (*llm.Reply, error) {
			return nil, &llm.Error{Kind: llm.ErrAuth, Status: 401}
		},
	)
	_, err := f.agent.Run(context.Background(), "x", nil)
	if llm.KindOf(err) != llm.ErrAuth {
		t.Fatalf("err = %v", err)
	}
	es, err := sessionlog.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	var msgs int
	for _, e := range es {
		if e.Type == sessionlog.TypeMessage {
			msgs++
		}
	}
	if msgs != 3 { // user, assistant tool call, tool result
		t.Errorf("%d messages logged, want 3", msgs)
	}
}

// TestInterruptDuringToolKeepsPairs cancels the turn once the first
// command is seen running (not after a guessed delay), and checks the
// interrupt reached it: its result says so, and the next call never ran.
func TestInterruptDuringToolKeepsPairs(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"touch started; sleep 30"}`), use("2", "bash", `{"command":"echo never"}`)),
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(f.proj, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := f.agent.Run(ctx, "x", nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	msgs := f.hist.Messages()
	last := msgs[len(msgs)-1]
	if len(last.Blocks) != 2 || !strings.Contains(last.Blocks[0].Content, "[harness: command interrupted]") ||
		last.Blocks[1].Content != "not run: the user interrupted the turn" {
		t.Errorf("last message %+v: want the running sleep interrupted and the next call not run", last)
	}
}

func TestContextTooLongCompactsAndRetries(t *testing.T) {
	summary := "<summary>\nGoal: x\n</summary>"
	f := newFixture(t,
		func(*llm.Request) (*llm.Reply, error) {
			return nil, &llm.Error{Kind: llm.ErrContextTooLong, Status: 400}
		},
		func(req *llm.Request) (*llm.Reply, error) { // the summarisation call
			return &llm.Reply{Message: llm.Text(llm.RoleAssistant, summary), Usage: llm.Usage{Input: 5, Output: 5}}, nil
		},
		text("after compaction"),
	)
	res, err := f.agent.Run(context.Background(), "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "after compaction" {
		t.Errorf("text %q", res.Text)
	}
}

func TestRestoreRebuildsSameRequest(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"seq 1 5000"}`)),
		text("first"),
		text("second"),
	)
	f.agent.Run(context.Background(), "one", nil)
	f.agent.Run(context.Background(), "two", nil)
	want := f.agent.Request(context.Background())

	es, err := sessionlog.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	h := history.New(history.Config{SpillDir: t.TempDir()})
	if _, err := Restore(h, es); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(h.Messages())
	wantB, _ := json.Marshal(want.Messages)
	if string(got) != string(wantB) {
		t.Errorf("restored history differs:\n got %s\nwant %s", got, wantB)
	}
	if h.Tokens() != f.hist.Tokens() {
		t.Errorf("restored token count %d, want %d", h.Tokens(), f.hist.Tokens())
	}
}

// bigTool answers with a long output and runs concurrently, like task.
type bigTool struct{}

func (bigTool) Spec() llm.Tool { return llm.Tool{Name: "big"} }
func (bigTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Tool: "big"}, nil
}
func (bigTool) Run(context.Context, json.RawMessage) tools.Result {
	return tools.Result{Content: strings.Repeat("long output line\n", 2000)}
}
func (bigTool) Concurrent() bool { return true }

// Concurrent calls whose results are capped at the same time must not race
// on the history (run with -race), and each keeps its own spill file.
func TestConcurrentCapsDoNotRace(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "big", `{}`), use("2", "big", `{}`), use("3", "big", `{}`)),
		text("ok"),
	)
	f.agent.o.Tools = f.agent.o.Tools.With(bigTool{})
	if _, err := f.agent.Run(context.Background(), "x", nil); err != nil {
		t.Fatal(err)
	}
	results := f.prov.reqs[1].Messages[2].Blocks
	paths := map[string]bool{}
	for _, r := range results {
		if r.Layer != history.LayerCap {
			t.Fatalf("result not capped: %+v", r.Layer)
		}
		paths[r.Content[strings.Index(r.Content, "harness cap"):]] = true
	}
	if len(paths) != 3 {
		t.Errorf("%d distinct cap markers for 3 results", len(paths))
	}
}

// panicky observer: its display breaks on every tool line.
type brokenDisplay struct {
	nopObserver
	notices []string
}

func (b *brokenDisplay) OnToolStart(llm.Block)    { panic("renderer bug") }
func (b *brokenDisplay) OnNotice(n notice.Notice) { b.notices = append(b.notices, n.Text) }

// A display bug must not end a turn half-recorded: the turn completes, the
// user is told once.
func TestObserverPanicDoesNotStopTheTurn(t *testing.T) {
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"echo a"}`), use("2", "bash", `{"command":"echo b"}`)),
		text("done"),
	)
	obs := &brokenDisplay{}
	res, err := f.agent.Run(context.Background(), "x", obs)
	if err != nil || res.Text != "done" {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if len(obs.notices) != 1 || !strings.Contains(obs.notices[0], "renderer bug") {
		t.Errorf("notices %q, want one about the display error", obs.notices)
	}
}

// allowAll is the gate of tests that check nothing.
func allowAll(context.Context, tools.Access) (bool, string) { return true, "" }

// TestStopStepGoesOn: Esc's StepStop ends the running command and the
// calls after it in the same reply, tells the model so, and the turn goes
// on to the model's next reply, which sees those results.
func TestStopStepGoesOn(t *testing.T) {
	var sawStopped bool
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"touch started; sleep 30"}`), use("2", "bash", `{"command":"touch never"}`)),
		func(req *llm.Request) (*llm.Reply, error) {
			last := req.Messages[len(req.Messages)-1]
			sawStopped = len(last.Blocks) == 2 && strings.Contains(last.Blocks[0].Content, stoppedStep) &&
				strings.Contains(last.Blocks[1].Content, "not run: "+stoppedStep)
			return &llm.Reply{Message: llm.Text(llm.RoleAssistant, "went on"), Usage: llm.Usage{Input: 5, Output: 5}}, nil
		},
	)
	var stop StepStop
	if stop.Stop() {
		t.Fatal("Stop with no step running reported a step")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan time.Time, 1)
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(f.proj, "started")); err == nil {
				if stop.Stop() {
					stopped <- time.Now()
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := f.agent.Run(WithStepStop(ctx, &stop), "x", nil)
	if err != nil {
		t.Fatalf("the turn did not go on after the step was stopped: %v", err)
	}
	if res.Text != "went on" || !sawStopped {
		t.Errorf("result %q, model saw the stopped calls: %v", res.Text, sawStopped)
	}
	if _, err := os.Stat(filepath.Join(f.proj, "never")); err == nil {
		t.Error("the call after the stopped one ran")
	}
	select {
	case at := <-stopped:
		if took := time.Since(at); took > 5*time.Second {
			t.Errorf("the turn ended %s after the stop", took)
		}
	default:
		t.Fatalf("the step was never seen running (%s)", time.Since(start))
	}
	if stop.Stop() {
		t.Error("Stop after the turn reported a step")
	}
}
