package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// These tests kill the real binary with SIGKILL in the middle of a step and
// check that the session log lost nothing that had completed, and that a
// resumed session rebuilds the same request bytes.

const testKey = "sk-crash-test-not-a-real-key-0123456789"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// harnessBinary is the harness binary for the crash tests; skipped with
// -short.
func harnessBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	return builtHarness(t)
}

// builtHarness builds cmd/harness and cmd/harness-sandbox once per package run (the go command's
// cache makes it cheap after the first, but linking a 17 MB binary is
// not), for every test that runs the real binary.
func builtHarness(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "harness-cli-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "harness")
		// Both binaries, as the README installs them: the sandbox then
		// re-executes the small helper beside harness for each command.
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/harness", "./cmd/harness-sandbox")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building harness: %v", buildErr)
	}
	return binPath
}

// crashEnv is one fake user: a home, a project and a fake provider.
type crashEnv struct {
	home, proj string
	srv        *llmtest.Server
	env        []string
}

func newCrashEnv(t *testing.T, provider string) *crashEnv {
	t.Helper()
	root := t.TempDir()
	e := &crashEnv{home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), srv: llmtest.NewServer(t)}
	for _, d := range []string{e.home, e.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A killed harness leaves its spill directory behind; keep it where
	// the test removes it (outside /tmp, which the sandbox hides).
	cache, err := os.MkdirTemp("/var/tmp", "harness-crash-cache-")
	if err != nil {
		cache = filepath.Join(e.home, ".cache")
	} else {
		t.Cleanup(func() { os.RemoveAll(cache) })
	}
	vars := map[string]string{
		"HOME": e.home, "XDG_CACHE_HOME": cache, "PROVIDER": provider,
		"BASE_URL": e.srv.URL, "MODEL": "claude-sonnet-4-5", "API_KEY": testKey, "NO_COLOR": "1",
	}
	e.env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		e.env = append(e.env, k+"="+v)
	}
	return e
}

// setenv makes this process see the same user, for in-process openSession.
func (e *crashEnv) setenv(t *testing.T) {
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
}

// start runs harness with args and returns it with its stdout lines.
func (e *crashEnv) start(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(harnessBinary(t), args...)
	cmd.Env = e.env
	cmd.Dir = e.proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever it left behind in its group, while its pid still names
		// that group: once the test has reaped it, the number may be
		// another group's (tests run in parallel, pids wrap quickly).
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("harness %v stderr:\n%s", args, stderr.String())
		}
	})
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// waitFor returns once cond holds; the deadline only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *crashEnv) logPath(t *testing.T) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(e.home, ".agents", "sessions", "*", "*.jsonl"))
	if len(names) != 1 {
		t.Fatalf("want one session log, found %v", names)
	}
	return names[0]
}

func readLog(t *testing.T, path string) []sessionlog.Entry {
	t.Helper()
	es, err := sessionlog.ReadFile(path)
	if err != nil && !errors.Is(err, sessionlog.ErrTornLine) {
		t.Fatal(err)
	}
	return es
}

func mainMessages(es []sessionlog.Entry) []llm.Message {
	var out []llm.Message
	for _, e := range es {
		if e.Type == sessionlog.TypeMessage && e.Agent == "" {
			out = append(out, *e.Message)
		}
	}
	return out
}

// TestSIGKILLDuringTool kills harness while its bash tool runs a long sleep:
// the log keeps the user message and the assistant's tool call, and
// --resume continues with the lost call answered.
func TestSIGKILLDuringTool(t *testing.T) {
	e := newCrashEnv(t, "anthropic")
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_sleep", Name: "bash", Input: `{"command":"sleep 300"}`}}, Usage: llm.Usage{Input: 11, Output: 3}})
	cmd, lines := e.start(t, "run", "--project", e.proj, "--allow", "bash sleep *", "--output-format", "stream-json",
		"run the slow job, key "+testKey)
	for line := range lines {
		if strings.Contains(line, `"type":"tool_use"`) {
			break
		}
	}
	path := e.logPath(t)
	// The tool has started; wait for the sandboxed sleep itself, then kill.
	waitFor(t, "the sleep to start", func() bool {
		out, _ := exec.Command("pgrep", "-f", "sleep 300").Output()
		return len(bytes.TrimSpace(out)) > 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	es := readLog(t, path)
	msgs := mainMessages(es)
	if len(msgs) != 2 {
		t.Fatalf("log holds %d messages, want the user message and the tool call: %+v", len(msgs), msgs)
	}
	if msgs[0].Role != llm.RoleUser || !strings.HasPrefix(msgs[0].PlainText(), "run the slow job, key [REDACTED]") {
		t.Fatalf("first message = %+v", msgs[0])
	}
	if calls := msgs[1].ToolCalls(); len(calls) != 1 || calls[0].ID != "call_sleep" || calls[0].Name != "bash" {
		t.Fatalf("second message = %+v", msgs[1])
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte(testKey)) {
		t.Fatal("the API key reached the session log")
	}

	id := es[0].Meta.ID
	e.srv.Enqueue(llmtest.Reply{Text: "resumed fine"})
	res := exec.Command(harnessBinary(t), "run", "--project", e.proj, "--resume", id, "--output-format", "json", "carry on")
	res.Env, res.Dir = e.env, e.proj
	out, err := res.Output()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	var rr runResult
	if err := json.Unmarshal(out, &rr); err != nil || rr.Result != "resumed fine" || rr.SessionID != id {
		t.Fatalf("resume output %s (%v)", out, err)
	}
	reqs := e.srv.Requests()
	got := reqs[len(reqs)-1].Messages
	if len(got) != 4 || got[2].Blocks[0].ToolUseID != "call_sleep" || got[2].Blocks[0].Content != sessionlog.InterruptedNote ||
		got[3].PlainText() != "carry on" {
		t.Fatalf("resumed request messages = %+v", got)
	}
	for _, r := range reqs {
		if bytes.Contains(r.Body, []byte("[REDACTED]")) && r.Path == reqs[0].Path && len(r.Messages) == 1 {
			t.Fatal("the first request was sent redacted: redaction is for logs only")
		}
	}
}

// TestResumeAfterSIGKILLSendsIdenticalBytes kills harness while the model
// streams its second reply (the tool call and its result are logged). The
// request a resumed session builds from the log must equal, byte for byte,
// the one the killed process sent for the same history: same system
// prompt, tools, messages, cache breakpoints and cache key. Only the
// reminder, which carries the clock, may differ.
func TestResumeAfterSIGKILLSendsIdenticalBytes(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			e := newCrashEnv(t, provider)
			// Skills, instructions and a plan are all part of the prefix.
			writeFile(t, filepath.Join(e.proj, "AGENTS.md"), "Always run make check.\n")
			writeFile(t, filepath.Join(e.home, ".agents", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nsteps\n")
			e.srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{
					{ID: "call_plan", Name: "write_todos", Input: `{"todos":[{"content":"Look","activeForm":"Looking","status":"in_progress"}]}`},
					{ID: "call_echo", Name: "bash", Input: `{"command":"echo hello"}`},
				}, Usage: llm.Usage{Input: 20, CacheRead: 100, Output: 9}},
				llmtest.Reply{Text: "never finished", Delay: time.Hour},
			)
			cmd, lines := e.start(t, "run", "--project", e.proj, "--output-format", "stream-json", "look around")
			go func() {
				for range lines {
				}
			}()
			waitFor(t, "the second request", func() bool { return len(e.srv.Requests()) == 2 })
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			killed := e.srv.Requests()[1]

			es := readLog(t, e.logPath(t))
			if n := len(mainMessages(es)); n != 3 {
				t.Fatalf("log holds %d messages, want prompt, calls, results", n)
			}

			e.setenv(t)
			s, err := openSession(context.Background(), &globalOptions{Project: e.proj, Resume: es[0].Meta.ID}, Stdio{Out: io.Discard, Err: io.Discard}, sessionSetup{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			e.srv.Enqueue(llmtest.Reply{Text: "ok"})
			if _, err := s.Provider.Stream(context.Background(), s.Agent.Request(context.Background()), nil); err != nil {
				t.Fatal(err)
			}
			resumed := e.srv.Requests()[2]

			if !strings.Contains(killed.System, "Always run make check.") || !strings.Contains(killed.System, "- release: Cut a release.") {
				t.Fatalf("system prompt lacks the instructions or skills:\n%s", killed.System)
			}
			if !strings.Contains(resumed.Reminder, "[>] Looking") {
				t.Fatalf("the resumed reminder lost the plan: %q", resumed.Reminder)
			}
			a, b := withoutReminder(t, killed), withoutReminder(t, resumed)
			if !bytes.Equal(a, b) {
				t.Fatalf("resumed request differs from the killed one:\nkilled:  %s\nresumed: %s", a, b)
			}
		})
	}
}

// withoutReminder returns the request body with its reminder text replaced
// by a placeholder; the reminder must be there exactly once.
func withoutReminder(t *testing.T, r llmtest.Request) []byte {
	t.Helper()
	if r.Reminder == "" {
		t.Fatalf("request has no reminder: %s", r.Body)
	}
	for _, html := range []bool{false, true} { // adapters may or may not escape <>
		var buf bytes.Buffer
		je := json.NewEncoder(&buf)
		je.SetEscapeHTML(html)
		_ = je.Encode(r.Reminder)
		enc := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		enc = enc[1 : len(enc)-1]
		if n := bytes.Count(r.Body, enc); n == 1 {
			return bytes.Replace(r.Body, enc, []byte("REMINDER"), 1)
		}
	}
	t.Fatalf("the reminder is not found exactly once in the body: %s", r.Body)
	return nil
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
