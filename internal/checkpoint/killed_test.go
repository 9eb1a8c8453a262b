package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// kill makes the marker of store s look like its process was killed.
func kill(t *testing.T, s *Store) {
	t.Helper()
	p := filepath.Join(runningDir(s.dir), sessionOf(s.dir))
	var m marker
	data, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("no marker for the call in flight: %v", err)
	}
	m.PID = 1 << 30
	data, _ = json.Marshal(m)
	os.WriteFile(p, data, 0o600)
}

// TestKilledCallIsTheAgents: harness is killed while a command rewrites a
// file an earlier call of the same turn wrote. Undo afterwards (from
// another process) sets the file back to before the turn: the killed
// call's change is the agent's, not a conflict. Before, undo left the
// file and called it changed by someone else.
func TestKilledCallIsTheAgents(t *testing.T) {
	proj, a, _ := twoSessions(t)
	keep := filepath.Join(proj, "keep.txt")
	a.StartTurn()
	end := a.Begin("c1", "bash")
	write(t, keep, "agent, first call\n")
	end()
	a.Begin("c2", "bash") // harness is killed during it
	write(t, keep, "agent, killed call\n")
	kill(t, a)

	res, err := Undo(a.dir, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "the user's\n" || len(res.Conflicts) > 0 {
		t.Errorf("after undo keep.txt = %q; result %+v", b, res)
	}
	if _, err := os.Stat(filepath.Join(runningDir(a.dir), "A")); err == nil {
		t.Errorf("the killed call's marker was left behind")
	}
}

// TestKilledCallLeavesEarlierEditsAlone: a hand edit made before the
// killed call began is still someone else's: a conflict, left alone.
func TestKilledCallLeavesEarlierEditsAlone(t *testing.T) {
	proj, a, _ := twoSessions(t)
	keep := filepath.Join(proj, "keep.txt")
	a.StartTurn()
	end := a.Begin("c1", "bash")
	write(t, keep, "agent\n")
	end()
	write(t, keep, "edited by hand\n")
	time.Sleep(100 * time.Millisecond)
	a.Begin("c2", "bash")
	write(t, filepath.Join(proj, "other.txt"), "x")
	kill(t, a)

	res, err := Undo(a.dir, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "edited by hand\n" || len(res.Conflicts) != 1 {
		t.Errorf("the hand edit before the killed call: keep.txt = %q; result %+v", b, res)
	}
}

// TestLiveCallIsNotRecovered: a call still running in another process is
// not taken as killed.
func TestLiveCallIsNotRecovered(t *testing.T) {
	proj, a, _ := twoSessions(t)
	a.StartTurn()
	end := a.Begin("c1", "bash")
	write(t, filepath.Join(proj, "keep.txt"), "agent\n")
	end()
	a.Begin("c2", "bash")
	recoverKilled(a.dir) // this process's own call: left alone
	es, _ := Entries(a.dir)
	if len(es) != 1 {
		t.Errorf("a call in flight was recorded as killed: %+v", es)
	}
}

// TestKilledCallCreatedFiles: the killed call created files and a
// directory and deleted a file the journal never saw. Its record starts
// from the tree saved when it began, so undo takes all of it back; before
// the state file, a path the journal never saw was not recorded and the
// created files stayed.
func TestKilledCallCreatedFiles(t *testing.T) {
	proj, a, _ := twoSessions(t)
	old := filepath.Join(proj, "old.txt")
	write(t, old, "the user's old file\n")
	a.StartTurn()
	a.Begin("c1", "bash") // harness is killed during it
	write(t, filepath.Join(proj, "new.txt"), "made by the killed call\n")
	os.MkdirAll(filepath.Join(proj, "dir", "sub"), 0o755)
	write(t, filepath.Join(proj, "dir", "sub", "deep.txt"), "deep\n")
	os.Remove(old)
	kill(t, a)

	res, err := Undo(a.dir, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"new.txt", "dir"} {
		if _, err := os.Lstat(filepath.Join(proj, p)); err == nil {
			t.Errorf("%s, made by the killed call, survived undo: %+v", p, res)
		}
	}
	if b, _ := os.ReadFile(old); string(b) != "the user's old file\n" {
		t.Errorf("old.txt, deleted by the killed call, after undo: %q (%+v)", b, res)
	}
}

// TestKilledCallNotAfterDeath: what changed after the killed call's
// process was gone (its last heartbeat) is not the call's.
func TestKilledCallNotAfterDeath(t *testing.T) {
	proj, a, _ := twoSessions(t)
	a.StartTurn()
	a.Begin("c1", "bash")
	write(t, filepath.Join(proj, "during.txt"), "the call's\n")
	kill(t, a)
	close(a.beat) // the process is gone: no more heartbeats
	died := time.Now()
	os.Chtimes(markerPath(a.dir), died, died)
	time.Sleep(2*beat + 200*time.Millisecond)
	write(t, filepath.Join(proj, "after.txt"), "someone's, after the kill\n")

	if _, err := Undo(a.dir, Selection{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(proj, "during.txt")); err == nil {
		t.Error("the killed call's own file survived undo")
	}
	if _, err := os.Stat(filepath.Join(proj, "after.txt")); err != nil {
		t.Error("undo removed a file made after the killed call's process was gone")
	}
}

// TestKilledFileToolBeforeItWrote: a file tool killed before it wrote its
// path claims nothing, though another session changed files in its
// window. Before, it recorded the other session's files as its own
// (seen in the two-session kill loop: both undos then refused them as
// shared).
func TestKilledFileToolBeforeItWrote(t *testing.T) {
	proj, a, b := twoSessions(t)
	a.StartTurn()
	b.StartTurn()
	a.Begin("w1", "write_file", filepath.Join(proj, "mine.txt")) // killed before it wrote
	endB := b.Begin("c1", "bash")
	write(t, filepath.Join(proj, "theirs.txt"), "B's\n")
	endB()
	kill(t, a)
	recoverKilled(a.dir)
	es, err := Entries(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		t.Errorf("A's journal has an entry for the killed call: %+v", e)
	}
	res, err := Undo(b.dir, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(proj, "theirs.txt")); err == nil || len(res.Conflicts) > 0 {
		t.Errorf("B's undo left its own file: %+v", res)
	}
}

// TestKilledFileToolAfterItWrote: a file tool killed after it wrote its
// path has that write recorded, and undo takes it back.
func TestKilledFileToolAfterItWrote(t *testing.T) {
	proj, a, _ := twoSessions(t)
	mine := filepath.Join(proj, "mine.txt")
	a.StartTurn()
	end := a.Begin("c1", "bash")
	write(t, filepath.Join(proj, "first.txt"), "x")
	end()
	a.Begin("w1", "write_file", mine)
	write(t, mine, "agent's\n")
	kill(t, a)
	recoverKilled(a.dir)
	es, err := Entries(a.dir)
	if err != nil || len(es) != 2 || len(es[1].Changes) != 1 || es[1].Changes[0].Path != mine {
		t.Fatalf("entries %+v (%v)", es, err)
	}
	if _, err := Undo(a.dir, Selection{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); err == nil {
		t.Errorf("undo left the killed call's file")
	}
}

// TestKilledAfterItsEntry: a call killed after its end wrote the entry
// but before the marker went (the state is saved last) is not recorded
// again by recovery, and its marker goes.
func TestKilledAfterItsEntry(t *testing.T) {
	proj, a, _ := twoSessions(t)
	a.StartTurn()
	end := a.Begin("c1", "bash")
	write(t, filepath.Join(proj, "x.txt"), "x")
	end()
	// The marker as the kill left it: the call's, its process gone.
	m := marker{PID: 1 << 30, Start: time.Now().Add(-time.Second), CallID: "c1", Tool: "bash", Turn: 1}
	data, _ := json.Marshal(m)
	os.MkdirAll(runningDir(a.dir), 0o700)
	os.WriteFile(markerPath(a.dir), data, 0o600)
	recoverKilled(a.dir)
	es, err := Entries(a.dir)
	if err != nil || len(es) != 1 {
		t.Errorf("entries after recovery: %+v (%v)", es, err)
	}
	if _, err := os.Stat(markerPath(a.dir)); err == nil {
		t.Errorf("the marker stayed")
	}
}
