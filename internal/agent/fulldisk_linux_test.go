package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// smallDisk mounts a 256 KiB tmpfs for the test and returns it, with a
// function that fills it (to ENOSPC) and one that frees it again.
func smallDisk(t *testing.T) (dir string, fill, free func()) {
	t.Helper()
	testenv.NeedRoot(t)
	dir = t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		testenv.Missing(t, testenv.Root, "cannot mount a tmpfs: "+err.Error())
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	filler := filepath.Join(dir, "filler")
	fill = func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := make([]byte, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
		// Byte by byte into the last page, so not even a short line fits.
		for {
			if _, err := f.Write(block[:1]); err != nil {
				break
			}
		}
	}
	free = func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	return dir, fill, free
}

// padToPage appends a notice that ends the log exactly at a page
// boundary: tmpfs takes appends into a page it has already given the file
// even when full, so only then does the next entry meet the full disk.
func padToPage(t *testing.T, lg *sessionlog.Log, path string) {
	t.Helper()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lineLen := func(text string) int {
		b, _ := json.Marshal(sessionlog.Entry{Type: sessionlog.TypeNotice, Time: at, Text: text})
		return len(b) + 1
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	room := 4096 - int(st.Size()%4096)
	if room < lineLen("x") {
		room += 4096
	}
	text := strings.Repeat("x", 1+room-lineLen("x"))
	if err := lg.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Time: at, Text: text}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size()%4096 != 0 {
		t.Fatalf("padding left the log at %d bytes", st.Size())
	}
}

// TestFullDiskMidTurn: the disk fills while the model answers, so the
// reply's usage entry and the messages after it cannot be written. The turn
// stops with the log's error (before: the usage was dropped in silence);
// once space is freed the next turn goes on, and the log alone rebuilds the
// very request and usage the live session has.
func TestFullDiskMidTurn(t *testing.T) {
	dir, fill, free := smallDisk(t)
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := sandbox.NewPolicy(sandbox.PolicyOptions{Project: proj, Home: t.TempDir()})
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
			padToPage(t, lg, logPath)
			fill()
			return toolCalls(use("1", "bash", `{"command":"echo hi"}`))(r)
		},
		text("done"),
	}}
	env := &tools.Env{Sandbox: &sandbox.None{P: pol}}
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
