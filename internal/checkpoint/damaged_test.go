package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedJournalRefuses: a line in the middle of the journal that is
// not an entry may have held a change of the turn being undone: undo
// refuses that turn, naming the line, and changes nothing, instead of
// undoing half of it and claiming success; a later turn, wholly after the
// damage, is still undone. Prune keeps the blobs the damaged line names.
func TestDamagedJournalRefuses(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a0\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b0\n"), 0o644)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(journal, root)
	store.StartTurn()
	end := store.Begin("c1", "bash")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a1\n"), 0o644)
	end()
	end = store.Begin("c2", "bash")
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b1\n"), 0o644)
	end()
	store.StartTurn()
	end = store.Begin("c3", "bash")
	os.WriteFile(filepath.Join(root, "c.txt"), []byte("c1\n"), 0o644)
	end()
	// Damage the second line (c2's record), keeping its blob names.
	data, _ := os.ReadFile(journal)
	lines := strings.Split(string(data), "\n")
	lines[1] = "\x00\x00garbage " + lines[1][10:]
	os.WriteFile(journal, []byte(strings.Join(lines, "\n")), 0o600)

	_, err := Undo(journal, Selection{FromTurn: 1}, Options{Force: true})
	var dmg *DamagedJournalError
	if !errors.As(err, &dmg) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("undo of the damaged turn: %v, want a refusal naming line 2", err)
	}
	for name, want := range map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != want {
			t.Errorf("%s changed by a refused undo: %q", name, b)
		}
	}
	res, err := Undo(journal, Selection{FromTurn: 2}, Options{})
	if err != nil {
		t.Fatalf("undo of the later turn: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "c.txt")); !os.IsNotExist(err) || len(res.Restored) != 1 {
		t.Errorf("the later turn was not undone: %+v", res)
	}
	if _, err := Entries(journal); !errors.As(err, &dmg) {
		t.Errorf("Entries hid the damage: %v", err)
	}
	Prune(filepath.Dir(journal), 1<<40)
	if _, err := Undo(journal, Selection{FromTurn: 1}, Options{}); !errors.As(err, &dmg) {
		t.Errorf("after Prune: %v", err)
	}
}

// TestPathsAsBytes: a file name that is not UTF-8 survives the journal,
// so undo finds and restores that file, not another.
func TestPathsAsBytes(t *testing.T) {
	root := t.TempDir()
	name := "caf\xe9-\xff.txt" // Latin-1, as a Windows share or an old archive leaves it
	os.WriteFile(filepath.Join(root, name), []byte("old\n"), 0o644)
	os.Symlink("tar\xffget", filepath.Join(root, "link"))
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(journal, root)
	store.StartTurn()
	end := store.Begin("c1", "bash")
	os.WriteFile(filepath.Join(root, name), []byte("new\n"), 0o644)
	os.Remove(filepath.Join(root, "link"))
	end()
	res, err := Undo(journal, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, name)); string(b) != "old\n" {
		t.Errorf("%q after undo: %q %v (%+v)", name, b, err, res)
	}
	if target, err := os.Readlink(filepath.Join(root, "link")); target != "tar\xffget" {
		t.Errorf("the link after undo points at %q (%v)", target, err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 2 {
		t.Errorf("undo made other files: %v", ents)
	}
}
