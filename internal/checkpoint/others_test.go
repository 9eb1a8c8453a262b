package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// twoSessions opens two stores, A and B, on one project, as two harness
// processes would (one journal each, beside each other).
func twoSessions(t *testing.T) (proj string, a, b *Store) {
	t.Helper()
	base := t.TempDir()
	proj = filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "keep.txt"), []byte("the user's\n"), 0o644)
	sessions := filepath.Join(base, "sessions")
	var err error
	if a, err = Open(Journal(sessions, "A"), proj); err != nil {
		t.Fatal(err)
	}
	if b, err = Open(Journal(sessions, "B"), proj); err != nil {
		t.Fatal(err)
	}
	return proj, a, b
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestOtherSessionsFileToolIsNotMine: session A's write_file lands while
// session B's command runs. B's scan sees it, but A's exact entry claims
// it: B journals only its own file, and B's undo leaves A's file alone.
// On the code before (a before/after scan alone) B's undo deleted it.
func TestOtherSessionsFileToolIsNotMine(t *testing.T) {
	proj, a, b := twoSessions(t)
	a.StartTurn()
	b.StartTurn()
	endB := b.Begin("b1", "bash")
	endA := a.Begin("a1", "write_file", filepath.Join(proj, "from-a.txt"))
	write(t, filepath.Join(proj, "from-a.txt"), "A's work\n")
	endA()
	write(t, filepath.Join(proj, "from-b.txt"), "B's work\n")
	endB()

	res, err := b.Undo(Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(proj, "from-a.txt")) {
		t.Errorf("B's undo deleted session A's file: %+v", res)
	}
	if exists(filepath.Join(proj, "from-b.txt")) {
		t.Errorf("B's undo left B's own file: %+v", res)
	}
	if len(res.Shared)+len(res.Conflicts) != 0 {
		t.Errorf("nothing was ambiguous: %+v", res)
	}
	// And A undoes its own.
	if res, err := a.Undo(Selection{}, Options{}); err != nil || exists(filepath.Join(proj, "from-a.txt")) {
		t.Errorf("A's undo: %+v, %v", res, err)
	}
}

// TestMyFileToolOnlyOwnsItsPath: while B's write_file runs, anything
// else that changes (another process) is not B's.
func TestMyFileToolOnlyOwnsItsPath(t *testing.T) {
	proj, _, b := twoSessions(t)
	b.StartTurn()
	end := b.Begin("b1", "write_file", filepath.Join(proj, "sub", "mine.txt"))
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	write(t, filepath.Join(proj, "sub", "mine.txt"), "B\n")
	write(t, filepath.Join(proj, "keep.txt"), "the user's, edited meanwhile\n")
	end()
	es, err := Entries(b.dir)
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %+v, %v", es, err)
	}
	var got []string
	for _, c := range es[0].Changes {
		got = append(got, filepath.Base(c.Path))
	}
	if !es[0].Exact || !slices.Equal(got, []string{"sub", "mine.txt"}) && !slices.Equal(got, []string{"mine.txt", "sub"}) {
		t.Errorf("B's write_file journaled %v (exact %v), want sub and mine.txt", got, es[0].Exact)
	}
	b.Undo(Selection{}, Options{})
	if s, _ := os.ReadFile(filepath.Join(proj, "keep.txt")); !strings.Contains(string(s), "edited meanwhile") {
		t.Errorf("B's undo took back an edit it did not make: %q", s)
	}
}

// TestOverlappingCommands: A's command and B's overlap. What A's command
// changed (its record, complete by the time B undoes) is never undone by
// B; what only B's window saw is B's and undone; a change both windows
// saw is named as shared and left alone unless --force.
func TestOverlappingCommands(t *testing.T) {
	proj, a, b := twoSessions(t)
	a.StartTurn()
	b.StartTurn()
	endA := a.Begin("a1", "bash")
	endB := b.Begin("b1", "bash")
	write(t, filepath.Join(proj, "from-a.txt"), "A's work\n")
	endA()
	write(t, filepath.Join(proj, "from-b.txt"), "B's work\n")
	endB()

	res, err := b.Undo(Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(proj, "from-a.txt")) {
		t.Fatalf("B's undo deleted what A's command made: %+v", res)
	}
	if exists(filepath.Join(proj, "from-b.txt")) {
		t.Errorf("B's undo left what only B's window saw: %+v", res)
	}
	if len(res.Shared) != 1 || !strings.Contains(res.Shared[0], "from-a.txt") || !strings.Contains(res.Shared[0], "session A") {
		t.Errorf("the shared change is not named with its session: %+v", res.Shared)
	}
	if d := res.Describe([]string{proj}); !strings.Contains(d, "another session") || !strings.Contains(d, "--force") {
		t.Errorf("Describe does not say why or what to do:\n%s", d)
	}
	// --force is the user's word: it restores the shared change too.
	if res, err := b.Undo(Selection{}, Options{Force: true}); err != nil || exists(filepath.Join(proj, "from-a.txt")) {
		t.Errorf("undo --force: %+v, %v", res, err)
	}
}

// TestRunningCommandElsewhere: while A's command is still running, every
// change B's command finds may be A's: journaled as shared. Once A's call
// has ended, its record decides: B's change came before A's call began
// (A's scan took it as the reference), so A's record does not claim it,
// and B's undo restores it.
func TestRunningCommandElsewhere(t *testing.T) {
	proj, a, b := twoSessions(t)
	a.StartTurn()
	b.StartTurn()
	endB := b.Begin("b1", "bash")
	write(t, filepath.Join(proj, "from-b.txt"), "B's work\n")
	endA := a.Begin("a1", "bash")
	endB()
	es, _ := Entries(b.dir)
	if len(es) != 1 || len(es[0].Changes) != 1 || !slices.Equal(es[0].Changes[0].Shared, []string{"A"}) {
		t.Fatalf("B's change while A's command ran is not marked shared with A: %+v", es)
	}
	if res, _ := b.Undo(Selection{}, Options{DryRun: true}); len(res.Shared) != 1 {
		t.Errorf("while A still runs, B's undo must leave it: %+v", res)
	}
	write(t, filepath.Join(proj, "from-a.txt"), "A's work\n")
	endA()
	res, err := b.Undo(Selection{}, Options{})
	if err != nil || exists(filepath.Join(proj, "from-b.txt")) {
		t.Errorf("A's record shows it did not make it, yet B's undo left it: %+v, %v", res, err)
	}
	if !exists(filepath.Join(proj, "from-a.txt")) {
		t.Errorf("B's undo took A's file: %+v", res)
	}
}

// TestStaleMarkerIgnored: a session killed mid-call leaves its marker;
// a process that no longer exists makes nothing shared.
func TestStaleMarkerIgnored(t *testing.T) {
	proj, _, b := twoSessions(t)
	os.MkdirAll(runningDir(b.dir), 0o700)
	m, _ := json.Marshal(marker{PID: 1 << 30})
	os.WriteFile(filepath.Join(runningDir(b.dir), "dead"), m, 0o600)
	// Its last heartbeat was long before B's call: not in flight beside it.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(runningDir(b.dir), "dead"), old, old)
	b.StartTurn()
	end := b.Begin("b1", "bash")
	write(t, filepath.Join(proj, "x.txt"), "x")
	end()
	es, _ := Entries(b.dir)
	if len(es) != 1 || len(es[0].Changes[0].Shared) != 0 {
		t.Errorf("a dead session's marker made a change shared: %+v", es)
	}
	if exists(filepath.Join(runningDir(b.dir), "B")) {
		t.Errorf("B's own marker outlived its call")
	}
}

// TestKilledPeerStaysShared: A was killed mid-command, after B's command
// ended beside it. What A's call changed is unknown forever, so B's undo
// must not take what both windows saw.
func TestKilledPeerStaysShared(t *testing.T) {
	proj, a, b := twoSessions(t)
	a.StartTurn()
	b.StartTurn()
	a.Begin("a1", "bash") // never ends: A is killed
	endB := b.Begin("b1", "bash")
	write(t, filepath.Join(proj, "maybe-a.txt"), "A's or B's\n")
	endB()
	// The kill: A's marker stays, its process is gone.
	var m marker
	data, _ := os.ReadFile(filepath.Join(runningDir(a.dir), "A"))
	json.Unmarshal(data, &m)
	m.PID = 1 << 30
	data, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(runningDir(a.dir), "A"), data, 0o600)
	res, err := b.Undo(Selection{}, Options{})
	if err != nil || !exists(filepath.Join(proj, "maybe-a.txt")) || len(res.Shared) != 1 {
		t.Errorf("B's undo took what a killed session's call may have made: %+v, %v", res, err)
	}
}
