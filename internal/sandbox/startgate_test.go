package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// TestStartGate: with a tracker, the command does nothing before the
// tracker follows it (its first fork could otherwise go unseen), then runs
// as usual; what it starts does not inherit the gate.
func TestStartGate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell")
	}
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(proj, "ran")
	var seen []string
	s := &instance{name: "test", live: walls.NewLive(p), tree: treeGroup,
		wrap: func(script, _ string) ([]string, []string, error) {
			return []string{"/bin/sh", "-c", script}, os.Environ(), nil
		},
		track: func(pid int) func() {
			time.Sleep(100 * time.Millisecond) // time enough to run, were it not held
			if exists(marker) {
				seen = append(seen, "the command ran before the tracker followed it")
			}
			return func() {}
		}}
	r, err := s.Run(context.Background(), Cmd{Script: "touch ran; ls /proc/self/fd /dev/fd 2>/dev/null | tr '\\n' ' '; echo; echo done"})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range seen {
		t.Error(msg)
	}
	if r.ExitCode != 0 || !strings.Contains(string(r.Output), "done") || !exists(marker) {
		t.Fatalf("the gated command did not run: exit %d: %s", r.ExitCode, r.Output)
	}
	// ls's own directory descriptor is 3 when the gate is closed; a leaked
	// gate would push it to 4.
	if fds := strings.Fields(strings.SplitN(string(r.Output), "\n", 2)[0]); runtime.GOOS == "linux" && gitshadow.Contains(fds, "4") {
		t.Errorf("the gate leaked into the command: fds %v", fds)
	}
}
