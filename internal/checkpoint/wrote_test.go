package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openStore(t *testing.T, root string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "checkpoints", "s.jsonl"), root)
	if err != nil {
		t.Fatal(err)
	}
	s.StartTurn()
	return s
}

// TestCommandWroteOnlyItsOwn: the user edits u.txt by hand while the
// command writes c.txt and makes a directory tree; the sandbox names what
// the command wrote. Undo restores c.txt and removes the tree, leaves the
// user's edit alone, and a note names it. With the set unknown (the last
// case) the edit is taken as the command's, as before, and a note says
// why.
func TestCommandWroteOnlyItsOwn(t *testing.T) {
	for _, known := range []bool{true, false} {
		root := t.TempDir()
		write(t, filepath.Join(root, "c.txt"), "before\n")
		write(t, filepath.Join(root, "u.txt"), "the user's\n")
		s := openStore(t, root)
		var notes []string
		s.Notify = func(n string) { notes = append(notes, n) }
		_, end := s.BeginCommand("c1", "bash")
		write(t, filepath.Join(root, "c.txt"), "the command's\n")
		os.MkdirAll(filepath.Join(root, "d", "e"), 0o755)
		write(t, filepath.Join(root, "d", "e", "f"), "deep\n")
		write(t, filepath.Join(root, "u.txt"), "the user's edit\n") // by hand, meanwhile
		why := ""
		if !known {
			why = "the none backend cannot tell what a command wrote"
		}
		// mkdir -p names d and d/e; the file inside is beneath them.
		end([]string{filepath.Join(root, "c.txt"), filepath.Join(root, "d"), filepath.Join(root, "d", "e")}, known, why)

		if _, err := s.Undo(Selection{}, Options{}); err != nil {
			t.Fatal(err)
		}
		c, _ := os.ReadFile(filepath.Join(root, "c.txt"))
		u, _ := os.ReadFile(filepath.Join(root, "u.txt"))
		if string(c) != "before\n" || exists(filepath.Join(root, "d")) {
			t.Errorf("known %v: the command's change is not undone: c.txt %q, d exists %v", known, c, exists(filepath.Join(root, "d")))
		}
		wantU := "the user's edit\n"
		if !known {
			wantU = "the user's\n" // taken as the command's: the old behaviour
		}
		if string(u) != wantU {
			t.Errorf("known %v: u.txt %q, want %q", known, u, wantU)
		}
		named := slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "someone else") && strings.Contains(n, "u.txt") })
		if named != known {
			t.Errorf("known %v: the user's edit named %v: %q", known, named, notes)
		}
		if !known && !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, why) }) {
			t.Errorf("no note says why the set is unknown: %q", notes)
		}
	}
}

// TestCommandWroteRename: a directory the command renamed takes what is
// beneath it along, both where it was and where it is.
func TestCommandWroteRename(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "old", "sub"), 0o755)
	write(t, filepath.Join(root, "old", "sub", "f"), "f\n")
	s := openStore(t, root)
	_, end := s.BeginCommand("c1", "bash")
	if err := os.Rename(filepath.Join(root, "old"), filepath.Join(root, "new")); err != nil {
		t.Fatal(err)
	}
	end([]string{filepath.Join(root, "old"), filepath.Join(root, "new")}, true, "")
	if _, err := s.Undo(Selection{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "old", "sub", "f")); string(b) != "f\n" || exists(filepath.Join(root, "new")) {
		t.Errorf("rename not undone: old/sub/f %q, new exists %v", b, exists(filepath.Join(root, "new")))
	}
}

// TestCommandWroteParallel: two commands of one session at once; the
// first to end leaves the other's change for the other to journal, not
// as someone else's.
func TestCommandWroteParallel(t *testing.T) {
	root := t.TempDir()
	s := openStore(t, root)
	var notes []string
	s.Notify = func(n string) { notes = append(notes, n) }
	_, end1 := s.BeginCommand("c1", "bash")
	_, end2 := s.BeginCommand("c2", "bash")
	write(t, filepath.Join(root, "one"), "1\n")
	write(t, filepath.Join(root, "two"), "2\n")
	end1([]string{filepath.Join(root, "one")}, true, "")
	end2([]string{filepath.Join(root, "two")}, true, "")
	entries, _ := readJournal(s.dir)
	var got []string
	for _, e := range entries {
		for _, c := range e.Changes {
			got = append(got, e.CallID+":"+filepath.Base(c.Path))
		}
	}
	if !slices.Equal(got, []string{"c1:one", "c2:two"}) || len(notes) > 0 {
		t.Errorf("journal %v, notes %q", got, notes)
	}
}
