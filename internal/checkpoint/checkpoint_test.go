package checkpoint

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type tree map[string]string // path -> "mode|content" or "dir|mode" or "link|target"

func snap(t *testing.T, root string) tree {
	t.Helper()
	out := tree{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out[rel] = "link|" + tg
		case fi.IsDir():
			out[rel] = "dir|" + fi.Mode().Perm().String()
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fi.Mode().Perm().String() + "|" + string(b)
		}
		return nil
	})
	return out
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// TestUndoStory: a turn writes a file, edits one, and in one shell command
// runs sed -i, rm, mkdir -p, chmod, mv and appends to a binary; the user
// then edits an unrelated file by hand; undoing the turn returns every
// agent change byte for byte (contents, modes, presence) and keeps the
// user's edit. No git anywhere.
func TestUndoStory(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "edit.txt"), []byte("alpha\nbeta\n"), 0o644)
	os.WriteFile(filepath.Join(root, "sed.txt"), []byte("one two\n"), 0o644)
	os.WriteFile(filepath.Join(root, "gone.txt"), []byte("delete me\n"), 0o600)
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(root, "old-name.txt"), []byte("moved\n"), 0o644)
	os.WriteFile(filepath.Join(root, "blob.bin"), []byte{0, 1, 2, 255, 0}, 0o644)
	os.WriteFile(filepath.Join(root, "user.txt"), []byte("user's\n"), 0o644)
	os.Symlink("edit.txt", filepath.Join(root, "link"))
	before := snap(t, root)
	store, err := Open(filepath.Join(t.TempDir(), "checkpoints", "s.jsonl"), root)
	if err != nil {
		t.Fatal(err)
	}
	store.StartTurn()
	end := store.Begin("c1", "write_file")
	os.WriteFile(filepath.Join(root, "new.txt"), []byte("written\n"), 0o644)
	end()
	end = store.Begin("c2", "edit_file")
	os.WriteFile(filepath.Join(root, "edit.txt"), []byte("alpha\nBETA\n"), 0o644)
	end()
	end = store.Begin("c3", "bash")
	sh(t, root, "sed -i 's/two/2/' sed.txt && rm gone.txt && mkdir -p a/b/c && echo x > a/b/c/f && chmod +x run.sh && mv old-name.txt new-name.txt && printf '\\377\\000' >> blob.bin && ln -sfn sed.txt link")
	end()
	// The user, by hand, between calls.
	os.WriteFile(filepath.Join(root, "user.txt"), []byte("user's edit\n"), 0o644)
	userAfter := snap(t, root)["user.txt"]

	res, err := store.Undo(Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) > 0 || len(res.Lost) > 0 {
		t.Errorf("conflicts %v lost %v", res.Conflicts, res.Lost)
	}
	got := snap(t, root)
	want := before
	want["user.txt"] = userAfter
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %q, want %q", p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is left over", p)
		}
	}
	// Undone once: a second undo has nothing of that turn left.
	if res, _ := store.Undo(Selection{}, Options{}); len(res.Restored) > 0 {
		t.Errorf("undone twice: %+v", res)
	}
}

// TestUndoConflict: a file the user changed after the agent is not
// overwritten (it is named), the rest is restored; --force overwrites it.
func TestUndoConflict(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a0\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b0\n"), 0o644)
	dir := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(dir, root)
	store.StartTurn()
	end := store.Begin("c1", "bash")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b1\n"), 0o644)
	end()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a by hand\n"), 0o644)
	// From another process, as harness undo after the session.
	res, err := Undo(dir, Selection{}, Options{DryRun: true})
	if err != nil || len(res.Conflicts) != 1 || !strings.HasSuffix(res.Conflicts[0], "a.txt") {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "b1\n" {
		t.Errorf("a dry run changed b.txt")
	}
	res, _ = Undo(dir, Selection{}, Options{})
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "a by hand\n" {
		t.Errorf("the user's edit was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "b0\n" {
		t.Errorf("b.txt not restored: %q", b)
	}
	if !strings.Contains(res.Describe([]string{root}), "a.txt") {
		t.Errorf("the conflict is not named: %s", res.Describe([]string{root}))
	}
}

// TestUndoAfterCrash: a journal whose last line was torn by a kill still
// undoes what it recorded, and says the torn call's changes are not known;
// a file too big to keep is said, not faked.
func TestUndoAfterCrash(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a0\n"), 0o644)
	big := bytes.Repeat([]byte("x"), MaxFile+1)
	os.WriteFile(filepath.Join(root, "big.out"), big, 0o644)
	dir := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	var notes []string
	store, _ := Open(dir, root)
	store.Notify = func(n string) { notes = append(notes, n) }
	store.StartTurn()
	end := store.Begin("c1", "bash")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "big.out"), append(big, 'y'), 0o644)
	end()
	f, _ := os.OpenFile(dir, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":9,"turn":1,"tool":"bash","changes":[{"path":"`)
	f.Close()
	res, err := Undo(dir, Selection{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "a0\n" {
		t.Errorf("a.txt after undo: %q", b)
	}
	if len(res.Lost) != 1 || !strings.HasSuffix(res.Lost[0], "big.out") {
		t.Errorf("the big file: %+v", res)
	}
	// The torn record is the newest call's: undo says its changes are
	// not known rather than claiming the turn is undone.
	if len(res.Unknown) != 1 || !strings.Contains(res.Describe([]string{root}), "not known to undo") {
		t.Errorf("the torn record is not said: %+v", res)
	}
	if !strings.Contains(strings.Join(append(notes, store.Notes()...), " "), "too big to keep") {
		t.Errorf("no note for the big file: %v", notes)
	}
}

// TestBigBuildOutput: a 500 MB build output (sparse here) is neither read
// nor copied: in build/ it is not walked at all, elsewhere it is named as
// too big to keep; the store stays small.
func TestBigBuildOutput(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "build"), 0o755)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, err := Open(journal, root)
	if err != nil {
		t.Fatal(err)
	}
	store.StartTurn()
	end := store.Begin("c1", "bash")
	for _, p := range []string{"build/app.bin", "out.img"} {
		f, _ := os.Create(filepath.Join(root, p))
		f.Truncate(500 << 20)
		f.Close()
	}
	end()
	if n := dirSize(blobDir(journal)); n > 1<<20 {
		t.Errorf("the store holds %d bytes after a 500 MB output", n)
	}
	notes := strings.Join(store.Notes(), " ")
	if !strings.Contains(notes, "out.img") || !strings.Contains(notes, "too big to keep") || strings.Contains(notes, "app.bin") {
		t.Errorf("notes: %s", notes)
	}
	entries, _ := Entries(journal)
	if len(entries) != 1 || len(entries[0].Changes) != 1 || !strings.HasSuffix(entries[0].Changes[0].Path, "out.img") {
		t.Errorf("entries: %+v", entries)
	}
	// Undoing it removes the file it created: no content needed for that.
	if res, _ := store.Undo(Selection{}, Options{}); len(res.Restored) != 1 {
		t.Errorf("undo: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "out.img")); err == nil {
		t.Errorf("out.img is still there")
	}
}
