package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// TestFullDiskMidTurn: the disk fills while the model answers, so the
// reply's usage entry and the messages after it cannot be written. The turn
// stops with the log's error (before: the usage was dropped in silence);
// once space is freed the next turn goes on, and the log alone rebuilds the
// very request and usage the live session has.
func TestFullDiskMidTurn(t *testing.T) {
	dir, fill, free := testenv.SmallDisk(t, "")
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "s.jsonl")
	lg, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	h := history.New(history.Config{SpillDir: t.TempDir()})
	p := &scripted{steps: []func(*llm.Request) (*llm.Reply, error){
		func(r *llm.Request) (*llm.Reply, error) {
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			testenv.PadToPage(t, logPath, func(text string) error {
				return lg.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Time: at, Text: text})
			})
			fill()
			return toolCalls(use("1", "bash", `{"command":"echo hi"}`))(r)
		},
		text("done"),
	}}
	env := &tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}}
	a := New(Options{Provider: p, Model: "m", System: "sys", Tools: tools.NewRegistry(tools.GateFunc(allowAll), tools.Builtins(env)...), History: h, Log: lg, MaxSteps: 10})

	_, err = a.Run(context.Background(), "one", nil)
	var we *sessionlog.WriteError
	if !errors.As(err, &we) || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("the turn on a full disk ended with %v, want the log's ENOSPC", err)
	}
	free()
	if _, err := a.Run(context.Background(), "go on", nil); err != nil {
		t.Fatal(err)
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}

	es, err := sessionlog.ReadFile(logPath)
	if err != nil {
		t.Fatalf("the log does not read after the full disk: %v", err)
	}
	h2 := history.New(history.Config{SpillDir: t.TempDir()})
	total, err := Restore(h2, es)
	if err != nil {
		t.Fatal(err)
	}
	if total != a.Usage() {
		t.Errorf("restored usage %+v, the live session's %+v", total, a.Usage())
	}
	got, _ := json.Marshal(h2.Messages())
	want, _ := json.Marshal(a.Request(context.Background()).Messages)
	if string(got) != string(want) {
		t.Errorf("restored history differs:\n got %s\nwant %s", got, want)
	}
}
