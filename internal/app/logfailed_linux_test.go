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

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
)

// The session's own records beside the conversation (what the proxy let
// through or refused, what the reminder told the model) do not stop a
// turn when the log cannot take them: the front end gets a LogFailed
// notice saying what could not be recorded and why, and the log keeps the
// entry and writes it before the next one. If the disk is still full
// then, the agent's next append fails and stops the turn, as for a
// message; once space is back, nothing is missing from the log.

// diskFixture is a session whose log lives on a 256 KiB tmpfs, answered by
// the fake provider, in a git project with an untracked file, so the first
// request's reminder reports a.txt and its state is logged.
type diskFixture struct {
	s          *Session
	srv        *llmtest.Server
	fill, free func()
	// freeOnNotice frees the disk when a LogFailed notice arrives, as a
	// user who reads it and makes room.
	freeOnNotice bool

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

// checkLogFailed wants exactly one LogFailed notice, a warning that says
// what could not be recorded and the disk's error.
func (f *diskFixture) checkLogFailed(t *testing.T, what string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var lf []notice.Notice
	for _, n := range f.notices {
		if n.Kind == notice.LogFailed {
			lf = append(lf, n)
		}
	}
	if len(lf) != 1 {
		t.Fatalf("want one %s notice, got %+v", notice.LogFailed, f.notices)
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

// checkLog closes the log and reads it back: it rebuilds the live
// session's history and usage, and holds an entry has accepts.
func (f *diskFixture) checkLog(t *testing.T, what string, has func(sessionlog.Entry) bool) {
	t.Helper()
	live, _ := json.Marshal(f.s.Agent.Request(context.Background()).Messages)
	usage := f.s.Agent.Usage()
	path := f.s.Log.Path()
	if err := f.s.Log.Close(); err != nil {
		t.Fatalf("closing the log: %v", err)
	}
	es, err := sessionlog.ReadFile(path)
	if err != nil {
		t.Fatalf("the log does not read back: %v", err)
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
// logged when the reply arrives.
func TestReminderStateLogFailed(t *testing.T) {
	const what = "could not record what the reminder told the model"
	hasState := func(e sessionlog.Entry) bool {
		st, ok := agent.LastReminder([]sessionlog.Entry{e})
		return ok && st.Files["a.txt"] != ""
	}
	for _, freed := range []bool{true, false} {
		name := map[bool]string{true: "space back on the notice", false: "the disk stays full"}[freed]
		t.Run(name, func(t *testing.T) {
			f := newDiskFixture(t, freed)
			// The first request fills the disk before it is answered, on
			// the test's goroutine (fillDisk may fail the test) while the
			// turn waits.
			asked, filled := make(chan struct{}, 1), make(chan struct{})
			var once sync.Once
			fillDone := func() { once.Do(func() { close(filled) }) }
			t.Cleanup(fillDone) // a failed test does not leave the server's handler waiting
			var served atomic.Int32
			f.srv.Handle(func(llmtest.Request) llmtest.Reply {
				if served.Add(1) == 1 {
					asked <- struct{}{}
					<-filled
					return llmtest.Reply{Text: "one"}
				}
				return llmtest.Reply{Text: "two"}
			})
			var res *agent.Result
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err = f.s.Agent.Run(context.Background(), "hi", nil)
			}()
			select {
			case <-asked:
				f.fillDisk(t)
				fillDone()
			case <-done:
				t.Fatalf("the turn ended before asking the model: %v", err)
			}
			<-done
			f.checkLogFailed(t, what)
			if freed {
				// The failed record does not stop the turn.
				if err != nil || res.Text != "one" {
					t.Fatalf("the turn: %+v, %v; want it to go on to the reply", res, err)
				}
			} else {
				// The agent's next append (the reply's usage) meets the
				// same full disk and stops the turn; space back, the next
				// turn goes on.
				checkFullDiskStops(t, err)
				f.free()
				if res, err := f.s.Agent.Run(context.Background(), "again", nil); err != nil || res.Text != "two" {
					t.Fatalf("the turn after space came back: %+v, %v", res, err)
				}
			}
			f.checkLog(t, "the reminder's state", hasState)
		})
	}
}

// TestNetworkRecordLogFailed: a connection the proxy decides while the
// disk is full cannot be logged.
func TestNetworkRecordLogFailed(t *testing.T) {
	const what = "could not record a network connection"
	rec := sandbox.ConnRecord{Method: "CONNECT", Host: "unlisted.test", Port: 443, Verdict: "refused", Reason: "no rule allows unlisted.test"}
	hasRecord := func(e sessionlog.Entry) bool {
		return e.Type == sessionlog.TypeNotice && e.Text == "network: "+rec.String()
	}
	for _, freed := range []bool{true, false} {
		name := map[bool]string{true: "space back on the notice", false: "the disk stays full"}[freed]
		t.Run(name, func(t *testing.T) {
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
			if freed {
				if err != nil || res.Text != "two" {
					t.Fatalf("the turn after the failed record: %+v, %v", res, err)
				}
			} else {
				// The user's message cannot be written either: the turn
				// stops before the model is asked.
				checkFullDiskStops(t, err)
				if n := len(f.srv.Requests()); n != 1 {
					t.Errorf("the provider got %d requests, want only the first turn's", n)
				}
				f.free()
				if res, err := f.s.Agent.Run(ctx, "once more", nil); err != nil || res.Text != "two" {
					t.Fatalf("the turn after space came back: %+v, %v", res, err)
				}
			}
			f.checkLog(t, "the network record", hasRecord)
		})
	}
}
