package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// modeSandbox opens the real bwrap sandbox over a fresh project.
func modeSandbox(t *testing.T) (sandbox.Sandbox, string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "harness-mode-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: base})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), sandbox.BackendBwrap)
	if err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+err.Error())
	}
	t.Cleanup(func() { sb.Close() })
	return sb, base
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// growing waits until path exists and grows.
func growing(t *testing.T, path string) {
	t.Helper()
	first := fileSize(path)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n := fileSize(path); n > 0 && n > first {
			return
		}
	}
	t.Fatalf("%s never grew", path)
}

const writerLoop = "while :; do echo x >> %s; sleep 0.01; done"

// TestPlanModeStopsRunningWriters: a background command and a foreground
// command in flight, both started under writable walls (real bwrap),
// append to project files in a loop. The switch into plan mode (the
// policy made read-only, then Jobs.Follow, as extend.Modes.Set does)
// stops both: on the host, neither file grows over the next second. The
// model is told by bash_output and by the foreground result, the user by
// the notes; a command started after the switch runs read-only and is
// left running; leaving plan mode says the stopped job stays stopped.
func TestPlanModeStopsRunningWriters(t *testing.T) {
	testenv.Slow(t)
	sb, proj := modeSandbox(t)
	js := &Jobs{Sandbox: sb}
	t.Cleanup(js.Close)
	env := &Env{Sandbox: sb, Jobs: js}
	bash := &Bash{Env: env}
	bg, fg := filepath.Join(proj, "bg.txt"), filepath.Join(proj, "fg.txt")

	id, err := js.Start(strings.ReplaceAll(writerLoop, "%s", "bg.txt"), false)
	if err != nil {
		t.Fatal(err)
	}
	fgDone := make(chan Result, 1)
	go func() {
		in, _ := json.Marshal(map[string]any{"command": strings.ReplaceAll(writerLoop, "%s", "fg.txt"), "timeout": 120})
		fgDone <- bash.Run(context.Background(), in)
	}()
	growing(t, bg)
	growing(t, fg)

	start := time.Now()
	sb.Live().SetProjectReadOnly(true)
	notes := js.Follow(true)
	took := time.Since(start)
	t.Logf("the switch stopped them in %s: %q", took.Round(time.Millisecond), notes)
	b0, f0 := fileSize(bg), fileSize(fg)
	time.Sleep(time.Second)
	if b1 := fileSize(bg); b1 != b0 {
		t.Errorf("the background command started before plan mode still writes: %d bytes, then %d a second later", b0, b1)
	}
	if f1 := fileSize(fg); f1 != f0 {
		t.Errorf("the command in flight at the switch still writes: %d bytes, then %d a second later", f0, f1)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], id) {
		t.Errorf("the notes for the user and the model: %q", notes)
	}
	select {
	case res := <-fgDone:
		if !strings.Contains(res.Content, "switched to plan mode") {
			t.Errorf("the foreground result does not say why it stopped:\n%s", res.Content)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the foreground command did not return after the switch")
	}
	out := (&BashOutput{Jobs: js}).Run(context.Background(), json.RawMessage(`{"id":"`+id+`"}`))
	if !strings.Contains(out.Content, "plan mode") {
		t.Errorf("bash_output does not say the job was stopped for plan mode:\n%s", out.Content)
	}

	// Started in plan mode: read-only walls, and the next switch leaves it.
	ro, err := js.Start("echo y >> ro.txt; sleep 30", false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if fileSize(filepath.Join(proj, "ro.txt")) != -1 {
		t.Error("a background command started in plan mode wrote the project")
	}
	sb.Live().SetProjectReadOnly(false)
	widened := strings.Join(js.Follow(false), " ")
	if !strings.Contains(widened, id) || !strings.Contains(widened, "stay stopped") || !strings.Contains(widened, ro) {
		t.Errorf("leaving plan mode says: %q", widened)
	}
	for _, in := range js.List() {
		if in.ID == ro && !in.Running {
			t.Errorf("%s, started read-only, was stopped by leaving plan mode", ro)
		}
	}
}
