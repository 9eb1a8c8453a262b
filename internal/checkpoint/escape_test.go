package checkpoint

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What a hostile command does to turn undo and the checkpoint scan
// against the host: swap a project directory or file for a symlink to
// somewhere outside. Every test asserts on the outside: the files there
// untouched, their bytes nowhere in the store.

// fakeSecret is what an outside file a command wants copied out holds.
const fakeSecret = "-----BEGIN FAKE OPENSSH PRIVATE KEY----- 7f3c9a1e-checkpoint-escape"

// outsideDir is a directory outside the project holding a file "f" and a
// file "g" with content the agent can guess (known), and "id_rsa".
func outsideDir(t *testing.T) string {
	t.Helper()
	return outsideDirIn(t, t.TempDir())
}

func outsideDirIn(t *testing.T, out string) string {
	t.Helper()
	for name, content := range map[string]string{"f": "known\n", "g": "known\n", "id_rsa": fakeSecret} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// storeHolds reports whether any file of the checkpoint store (journal
// and blobs) holds needle.
func storeHolds(t *testing.T, journal, needle string) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Dir(journal), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(needle)) {
			found = p
		}
		return nil
	})
	return found
}

// TestUndoSwappedDirToOutside: a call creates d/f and changes d/g (to
// content that, by guess, the outside files already hold); d is then
// swapped for a link to a directory outside. Undo, with and without
// --force, and whether the swap was a journaled call or made between
// calls, neither deletes nor writes a file outside, and says what it
// refused.
func TestUndoSwappedDirToOutside(t *testing.T) {
	for _, c := range []struct {
		name      string
		journaled bool // the swap is a call of its own, undone too
		force     bool
	}{
		{"between calls", false, false},
		{"between calls, force", false, true},
		{"in a later call, force", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, outside := t.TempDir(), outsideDir(t)
			os.Mkdir(filepath.Join(root, "d"), 0o755)
			os.WriteFile(filepath.Join(root, "d", "g"), []byte("old\n"), 0o644)
			journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
			store, _ := Open(journal, root)
			store.StartTurn()
			end := store.Begin("c1", "bash")
			os.WriteFile(filepath.Join(root, "d", "f"), []byte("known\n"), 0o644)
			os.WriteFile(filepath.Join(root, "d", "g"), []byte("known\n"), 0o644)
			end()
			swap := func() {
				os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d.real"))
				os.Symlink(outside, filepath.Join(root, "d"))
			}
			if c.journaled {
				store.StartTurn()
				end := store.Begin("c2", "bash")
				swap()
				end()
			} else {
				swap()
			}
			before := snap(t, outside)
			res, err := Undo(journal, Selection{FromTurn: 1}, Options{Force: c.force})
			if err != nil {
				t.Fatal(err)
			}
			after := snap(t, outside)
			for p, w := range before {
				if after[p] != w {
					t.Errorf("outside %s: %q, was %q: undo wrote through the link", p, after[p], w)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("outside %s appeared: undo wrote through the link", p)
				}
			}
			if !c.journaled && (len(res.Refused) == 0 || !strings.Contains(strings.Join(res.Refused, "\n"), "symlink")) {
				t.Errorf("undo did not say what it refused and why: %+v", res)
			}
			if c.journaled {
				// Undoing the swap itself puts the real directory back
				// where the link was (the link is removed, not followed).
				if fi, err := os.Lstat(filepath.Join(root, "d")); err != nil || !fi.IsDir() {
					t.Errorf("d is not a directory again: %v %v (%+v)", fi, err, res)
				}
			}
		})
	}
}

// TestUndoSwappedFileToOutside: a file the agent changed is swapped for a
// link to an outside file; undo --force replaces the link (a name in the
// project) and leaves the outside file alone.
func TestUndoSwappedFileToOutside(t *testing.T) {
	root, outside := t.TempDir(), outsideDir(t)
	os.WriteFile(filepath.Join(root, "g"), []byte("old\n"), 0o644)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(journal, root)
	end := store.Begin("c1", "bash")
	os.WriteFile(filepath.Join(root, "g"), []byte("known\n"), 0o644)
	end()
	os.Remove(filepath.Join(root, "g"))
	os.Symlink(filepath.Join(outside, "g"), filepath.Join(root, "g"))
	if _, err := Undo(journal, Selection{}, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "g")); string(b) != "known\n" {
		t.Errorf("outside g: %q: undo wrote through the link", b)
	}
	if fi, err := os.Lstat(filepath.Join(root, "g")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("g not restored as a file: %v %v", fi, err)
	}
}

// TestUndoRefusesPathOutsideRoots: a journal entry naming a path outside
// the roots it records (a damaged or forged journal) is refused.
func TestUndoRefusesPathOutsideRoots(t *testing.T) {
	root, outside := t.TempDir(), outsideDir(t)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	os.MkdirAll(filepath.Dir(journal), 0o700)
	victim := filepath.Join(outside, "f")
	e := Entry{Seq: 1, Turn: 1, Tool: "bash", Time: time.Now(), Roots: []string{root},
		Changes: []Change{{Path: victim, Before: State{Kind: "absent"}, After: State{Kind: "file", Mode: 0o644}}}}
	if err := appendJournal(journal, e); err != nil {
		t.Fatal(err)
	}
	res, err := Undo(journal, Selection{}, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("undo removed %s, outside the roots: %v", victim, err)
	}
	if len(res.Refused) != 1 {
		t.Errorf("refused %v", res.Refused)
	}
}

// TestScanSwappedToSecret: a project file swapped, before a scan, for a
// link to a fake private key outside, and a project directory swapped for
// a link to the key's directory: the key's bytes are nowhere in the store
// or the journal.
func TestScanSwappedToSecret(t *testing.T) {
	root, outside := t.TempDir(), outsideDir(t)
	os.WriteFile(filepath.Join(root, "id_rsa"), []byte("harmless\n"), 0o600)
	os.Mkdir(filepath.Join(root, "ssh"), 0o755)
	os.WriteFile(filepath.Join(root, "ssh", "id_rsa"), []byte("harmless\n"), 0o600)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(journal, root)
	end := store.Begin("c1", "bash")
	os.Remove(filepath.Join(root, "id_rsa"))
	os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(root, "id_rsa"))
	os.Rename(filepath.Join(root, "ssh"), filepath.Join(root, "ssh.real"))
	os.Symlink(outside, filepath.Join(root, "ssh"))
	end()
	end = store.Begin("c2", "bash")
	end()
	if p := storeHolds(t, journal, fakeSecret); p != "" {
		t.Errorf("the outside key's bytes are in the checkpoint store: %s", p)
	}
}
