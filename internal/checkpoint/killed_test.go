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
