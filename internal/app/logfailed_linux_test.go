package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
)

// The session's own records beside the conversation (what the proxy let
// through or refused, what the reminder told the model, the gate's
// decisions, the tools' notices) do not stop a turn when the log cannot
// take them: the front end gets a LogFailed notice saying what could not
// be recorded and why, and the log keeps the entry and writes it before
// the next one. If the disk is still full then, the agent's next append
// fails and stops the turn, as for a message; once space is back, nothing
// is missing from the log.

// diskFixture is a session whose log lives on a 256 KiB tmpfs, answered by
// the fake provider, in a git project with an untracked file, so the first
// request's reminder reports a.txt and its state is logged. The sandbox is
// none, so the gate asks about every command.
type diskFixture struct {
	s          *Session
	srv        *llmtest.Server
	fill, free func()
	// freeOnNotice frees the disk when a LogFailed notice arrives, as a
	// user who reads it and makes room.
	freeOnNotice bool
	// onPrompt and onDecided, when set, run inside the turn: where the
	// gate asks the user (before the decision is logged), and once a
	// decision is logged (before the command runs). The gate's prompter
	// answers yes.
	onPrompt, onDecided func()

	mu      sync.Mutex
	notices []notice.Notice
}

func newDiskFixture(t *testing.T, freeOnNotice bool) *diskFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "git is not installed")
	}
	o := testOptions(t)
	if out, err := exec.Command("git", "init", "-q", o.WorkDir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(o.WorkDir, "a.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &diskFixture{freeOnNotice: freeOnNotice}
	_, f.fill, f.free = testenv.SmallDisk(t, sessionlog.Root(o.Source.Home))
	o.Prompter = askFunc(func() {
		if f.onPrompt != nil {
			f.onPrompt()
		}
	})
	o.OnDecision = func(permission.Record) {
		if f.onDecided != nil {
			f.onDecided()
		}
	}
	f.srv = llmtest.NewServer(t)
	o.Source.Env["BASE_URL"] = f.srv.URL
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	f.s = s
	s.SetNotify(func(n notice.Notice) {
		f.mu.Lock()
		f.notices = append(f.notices, n)
		f.mu.Unlock()
		if n.Kind == notice.LogFailed && f.freeOnNotice {
			f.free()
		}
	})
	return f
}

// fillDisk fills the log's disk, the log first padded to a page boundary
// (testenv.PadToPage) so that the next entry really meets the full disk.
func (f *diskFixture) fillDisk(t *testing.T) {
	t.Helper()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testenv.PadToPage(t, f.s.Log.Path(), func(text string) error {
		return f.s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Time: at, Text: "padding " + text})
	})
	f.fill()
}

// askFunc is a prompter that runs a hook and answers yes.
type askFunc func()

func (a askFunc) Prompt(context.Context, permission.Request, permission.Decision, string) (permission.Answer, error) {
	a()
	return permission.Answer{Choice: permission.Yes}, nil
}

// midTurn is a point inside a turn (the provider answering, the user
// being asked, a command about to run) where the turn waits, the first
// time it gets there, while the test fills the disk on its own goroutine
// (fillDisk may fail the test).
type midTurn struct {
	reached      chan struct{}
	filled       chan struct{}
	first, fills sync.Once
}

func newMidTurn(t *testing.T) *midTurn {
	m := &midTurn{reached: make(chan struct{}, 1), filled: make(chan struct{})}
	t.Cleanup(m.resume) // a failed test does not leave the turn waiting
	return m
}

// wait is the turn's side: the first call waits for the disk to fill,
// later ones go on.
func (m *midTurn) wait() {
	m.first.Do(func() {
		m.reached <- struct{}{}
		<-m.filled
	})
}

func (m *midTurn) resume() { m.fills.Do(func() { close(m.filled) }) }

// runFilling runs a turn and fills the disk when the turn reaches m.
func (f *diskFixture) runFilling(t *testing.T, m *midTurn, prompt string) (*agent.Result, error) {
	t.Helper()
	var res *agent.Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = f.s.Agent.Run(context.Background(), prompt, nil)
	}()
	select {
	case <-m.reached:
		f.fillDisk(t)
		m.resume()
	case <-done:
		t.Fatalf("the turn ended before the disk filled: %+v, %v", res, err)
	}
	<-done
	return res, err
}

// bothDisks runs check with the space back on the LogFailed notice and
// with the disk staying full.
func bothDisks(t *testing.T, check func(t *testing.T, freed bool)) {
	for _, freed := range []bool{true, false} {
		name := map[bool]string{true: "space back on the notice", false: "the disk stays full"}[freed]
		t.Run(name, func(t *testing.T) { check(t, freed) })
	}
}

// checkTurn checks the turn the failed record happened in (or the turn
// after it, for a record between turns). Space back on the notice, the
// failed record does not stop it: it goes on to the reply want. The disk
// still full, the agent's next append meets it and stops the turn with
// the log's ENOSPC; space back, the next turn goes on to the reply next.
func (f *diskFixture) checkTurn(t *testing.T, res *agent.Result, err error, want, next string) {
	t.Helper()
	if f.freeOnNotice {
		if err != nil || res.Text != want {
			t.Fatalf("the turn: %+v, %v; want it to go on to the reply %q", res, err, want)
		}
		return
	}
	checkFullDiskStops(t, err)
	f.free()
	if res, err := f.s.Agent.Run(context.Background(), "again", nil); err != nil || res.Text != next {
		t.Fatalf("the turn after space came back: %+v, %v; want the reply %q", res, err, next)
	}
}

// seen is the notices the front end got so far.
func (f *diskFixture) seen() []notice.Notice {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.notices)
}

// checkLogFailed wants exactly one LogFailed notice, a warning that says
// what could not be recorded and the disk's error.
func (f *diskFixture) checkLogFailed(t *testing.T, what string) {
	t.Helper()
	seen := f.seen()
	var lf []notice.Notice
	for _, n := range seen {
		if n.Kind == notice.LogFailed {
			lf = append(lf, n)
		}
	}
	if len(lf) != 1 {
		t.Fatalf("want one %s notice, got %+v", notice.LogFailed, seen)
	}
	n := lf[0]
	const enospc = "no space left on device"
	if n.Level != notice.LevelWarning || !strings.HasPrefix(n.Text, what+": ") || !strings.Contains(n.Text, enospc) || !strings.Contains(n.Err, enospc) {
		t.Errorf("notice %+v: want a warning saying %q and %q", n, what, enospc)
	}
}

// checkFullDiskStops wants the turn's error to be the log's, the disk's
// ENOSPC, as for any failed message append.
func checkFullDiskStops(t *testing.T, err error) {
	t.Helper()
	var we *sessionlog.WriteError
	if !errors.As(err, &we) || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("the turn on a full disk ended with %v, want the log's ENOSPC", err)
	}
}

// checkLog reads the log back while it is still open (Close would write
// what is pending, so this is what the session's own writes put on disk):
// it rebuilds the live session's history and usage, and holds an entry has
// accepts. Then it closes the log.
func (f *diskFixture) checkLog(t *testing.T, what string, has func(sessionlog.Entry) bool) {
	t.Helper()
	live, _ := json.Marshal(f.s.Agent.Request(context.Background()).Messages)
	usage := f.s.Agent.Usage()
	es, err := sessionlog.ReadFile(f.s.Log.Path())
	if err != nil {
		t.Fatalf("the log does not read back: %v", err)
	}
	if err := f.s.Log.Close(); err != nil {
		t.Fatalf("closing the log: %v", err)
	}
	if !slices.ContainsFunc(es, has) {
		t.Errorf("the log lost %s", what)
	}
	h := history.New(history.Config{SpillDir: t.TempDir()})
	total, err := agent.Restore(h, es)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(h.Messages()); string(got) != string(live) {
		t.Errorf("the log rebuilds another history:\n got %s\nwant %s", got, live)
	}
	if total != usage {
		t.Errorf("the log rebuilds usage %+v, the live session's is %+v", total, usage)
	}
}

// TestReminderStateLogFailed: the disk fills while the model answers, so
// the reminder's state (that it told the model about a.txt) cannot be
// logged when the reply arrives; the disk still full, the turn stops at
// the reply's usage.
func TestReminderStateLogFailed(t *testing.T) {
	const what = "could not record what the reminder told the model"
	hasState := func(e sessionlog.Entry) bool {
		st, ok := agent.LastReminder([]sessionlog.Entry{e})
		return ok && st.Files["a.txt"] != ""
	}
	bothDisks(t, func(t *testing.T, freed bool) {
		f := newDiskFixture(t, freed)
		m := newMidTurn(t)
		var served atomic.Int32
		f.srv.Handle(func(llmtest.Request) llmtest.Reply {
			if served.Add(1) == 1 {
				m.wait()
				return llmtest.Reply{Text: "one"}
			}
			return llmtest.Reply{Text: "two"}
		})
		res, err := f.runFilling(t, m, "hi")
		f.checkLogFailed(t, what)
		f.checkTurn(t, res, err, "one", "two")
		f.checkLog(t, "the reminder's state", hasState)
	})
}

// TestNetworkRecordLogFailed: a connection the proxy decides while the
// disk is full cannot be logged; the disk still full, the next turn stops
// at the user's message, before the model is asked.
func TestNetworkRecordLogFailed(t *testing.T) {
	const what = "could not record a network connection"
	rec := netproxy.ConnRecord{Method: "CONNECT", Host: "unlisted.test", Port: 443, Verdict: "refused", Reason: "no rule allows unlisted.test"}
	hasRecord := func(e sessionlog.Entry) bool {
		return e.Type == sessionlog.TypeNotice && e.Text == "network: "+rec.String()
	}
	bothDisks(t, func(t *testing.T, freed bool) {
		f := newDiskFixture(t, freed)
		f.srv.Enqueue(llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
		ctx := context.Background()
		if _, err := f.s.Agent.Run(ctx, "hi", nil); err != nil {
			t.Fatal(err)
		}
		f.fillDisk(t)
		f.s.Proxy.Record(rec) // a command's connection, refused
		f.checkLogFailed(t, what)
		res, err := f.s.Agent.Run(ctx, "again", nil)
		if n := len(f.srv.Requests()); !freed && n != 1 {
			t.Errorf("the provider got %d requests, want only the first turn's", n)
		}
		f.checkTurn(t, res, err, "two", "two")
		f.checkLog(t, "the network record", hasRecord)
	})
}

// bashCall is a reply that runs command with the bash tool.
func bashCall(command string) llmtest.Reply {
	input, _ := json.Marshal(map[string]string{"command": command})
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: string(input)}}}
}

// TestPermissionDecisionLogFailed: the disk fills while the user is asked
// about a command (the sandbox is none, so every command is asked), so
// the decision cannot be logged; the command still runs, and the disk
// still full, the turn stops at its result.
func TestPermissionDecisionLogFailed(t *testing.T) {
	const what, command = "could not record a permission decision", "echo hi"
	hasRecord := func(e sessionlog.Entry) bool {
		p := e.Permission
		return e.Type == sessionlog.TypePermission && p != nil && p.Tool == "bash" && p.Command == command && p.Answer == "yes"
	}
	bothDisks(t, func(t *testing.T, freed bool) {
		f := newDiskFixture(t, freed)
		m := newMidTurn(t)
		f.onPrompt = m.wait
		f.srv.Enqueue(bashCall(command), llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
		res, err := f.runFilling(t, m, "hi")
		f.checkLogFailed(t, what)
		f.checkTurn(t, res, err, "one", "one")
		ran := func(m llm.Message) bool {
			return slices.ContainsFunc(m.Blocks, func(b llm.Block) bool {
				return b.Type == llm.BlockToolResult && !b.IsError && strings.HasPrefix(b.Content, "hi\n")
			})
		}
		if !slices.ContainsFunc(f.s.History.Messages(), ran) {
			t.Errorf("the command did not run: no result in %+v", f.s.History.Messages())
		}
		f.checkLog(t, "the permission decision", hasRecord)
	})
}

// TestToolNoticeLogFailed: the disk fills once the command is allowed,
// so the tool's notice (the repository the command made) cannot be
// logged; the user still sees it, and the disk still full, the turn stops
// at the command's result.
func TestToolNoticeLogFailed(t *testing.T) {
	const what = "could not record that notice"
	bothDisks(t, func(t *testing.T, freed bool) {
		f := newDiskFixture(t, freed)
		repo := filepath.Join(f.s.Sandbox.Policy().Project(), "sub", ".git")
		m := newMidTurn(t)
		f.onDecided = m.wait
		f.srv.Enqueue(bashCall("git init -q sub"), llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
		res, err := f.runFilling(t, m, "hi")
		f.checkLogFailed(t, what)
		seen := f.seen()
		i := slices.IndexFunc(seen, func(n notice.Notice) bool {
			return n.Kind == notice.SandboxFinding && slices.Contains(n.Paths, repo)
		})
		if i < 0 {
			t.Fatalf("no %s notice of %s reached the front end: %+v", notice.SandboxFinding, repo, seen)
		}
		text := seen[i].Text
		f.checkTurn(t, res, err, "one", "one")
		f.checkLog(t, "the tool's notice", func(e sessionlog.Entry) bool {
			return e.Type == sessionlog.TypeNotice && e.Text == text
		})
	})
}
