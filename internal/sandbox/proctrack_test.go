package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// TestTrackedAdopt: a command's tree is its session, its group, every
// descendant of what was seen, including one that called setsid, but never
// a pid reused by a stranger, harness itself or init.
func TestTrackedAdopt(t *testing.T) {
	const root, self = 100, 50
	table := []procEntry{
		{pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1},
		{pid: self, ppid: 1, pgid: self, sid: self, start: 2},
		{pid: root, ppid: self, pgid: root, sid: root, start: 10},
		{pid: 101, ppid: root, pgid: root, sid: root, start: 11}, // a child
		{pid: 102, ppid: 101, pgid: 102, sid: 102, start: 12},    // setsid'd grandchild
		{pid: 103, ppid: 102, pgid: 102, sid: 102, start: 13},    // its child
		{pid: 104, ppid: 1, pgid: root, sid: root, start: 14},    // orphaned, still in the session
		{pid: 105, ppid: 1, pgid: 105, sid: 105, start: 15},      // orphaned setsid'd, seen before
		{pid: 106, ppid: 1, pgid: 106, sid: 106, start: 99},      // reused pid of a tracked process
		{pid: 200, ppid: self, pgid: 200, sid: 200, start: 20},   // another command of harness
		{pid: 300, ppid: 1, pgid: 300, sid: 300, start: 30},      // a stranger
	}
	tracked := trackedSet{root: 10, 105: 15, 106: 16}
	var got []int
	for _, e := range tracked.adopt(table, root, self) {
		got = append(got, e.pid)
	}
	sort.Ints(got)
	want := []int{root, 101, 102, 103, 104, 105}
	if len(got) != len(want) {
		t.Fatalf("adopt = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("adopt = %v, want %v", got, want)
		}
	}
	if tracked[103] != 13 {
		t.Errorf("a new descendant was not tracked: %v", tracked)
	}
	// Once seen, a process stays tracked after its parent dies.
	table2 := []procEntry{{pid: 103, ppid: 1, pgid: 103, sid: 103, start: 13}}
	if n := len(tracked.adopt(table2, root, self)); n != 1 {
		t.Errorf("a tracked orphan was forgotten (%d found)", n)
	}
}

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
	s := &instance{name: "test", pol: p, tree: treeGroup,
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
