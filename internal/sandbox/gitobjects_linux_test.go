package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// TestImportObjectsRefuses: what a command leaves in the shadow's objects
// directory reaches the real repository only as the objects it names, and
// nothing there can make the host read elsewhere, stall, or replace an
// object. Host-side, no sandbox: the command's part is played by writes
// into the shadow.
func TestImportObjectsRefuses(t *testing.T) {
	t.Parallel() // see parallelTests in main_test.go
	_, proj := gitProject(t)
	dotgit := filepath.Join(proj, ".git")
	// An object another repository made, copied in: must be imported.
	_, other := gitProject(t)
	os.WriteFile(filepath.Join(other, "new.txt"), []byte("new content\n"), 0o644)
	good := hostGit(t, other, "hash-object", "-w", "new.txt")
	// Two packs of other objects, to swap their indexes.
	os.WriteFile(filepath.Join(other, "p1.txt"), []byte("pack one\n"), 0o644)
	p1 := hostGit(t, other, "hash-object", "-w", "p1.txt")
	os.WriteFile(filepath.Join(other, "p2.txt"), []byte("pack two\n"), 0o644)
	p2 := hostGit(t, other, "hash-object", "-w", "p2.txt")
	packOf := func(obj string) string {
		cmd := exec.Command("git", "-C", other, "pack-objects", "-q", filepath.Join(other, "x"))
		cmd.Stdin = strings.NewReader(obj + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(other, "x-"+strings.TrimSpace(string(out)))
	}
	pk1, pk2 := packOf(p1), packOf(p2)

	existing := hostGit(t, proj, "rev-parse", "HEAD")
	existingPath := filepath.Join(dotgit, "objects", existing[:2], existing[2:])
	before, err := os.ReadFile(existingPath)
	if err != nil {
		t.Fatal(err)
	}

	gs, err := gitshadow.Open(walls.Fixture{Project: proj, GitWrite: []walls.GitDir{{Dir: dotgit, Dirs: []string{"refs", "logs"}, Refs: true, Objects: true}}}.Build(), filepath.Join(t.TempDir(), "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	sh := gs.Shadows[0]
	stage := sh.ObjectsDir()
	put := func(rel string, data []byte) {
		os.MkdirAll(filepath.Join(stage, filepath.Dir(rel)), 0o755)
		if err := os.WriteFile(filepath.Join(stage, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goodData, _ := os.ReadFile(filepath.Join(other, ".git", "objects", good[:2], good[2:]))
	put(good[:2]+"/"+good[2:], goodData)
	// The existing commit's name with other content: never replaces it.
	put(existing[:2]+"/"+existing[2:], goodData)
	// A name its content does not hash to, and garbage.
	fake := strings.Repeat("ab", 20)
	put(fake[:2]+"/"+fake[2:], goodData)
	junk := strings.Repeat("cd", 20)
	put(junk[:2]+"/"+junk[2:], []byte("not zlib"))
	// A link to a secret and a FIFO under object names.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, goodData, 0o600)
	link := strings.Repeat("ef", 20)
	os.MkdirAll(filepath.Join(stage, link[:2]), 0o755)
	os.Symlink(secret, filepath.Join(stage, link[:2], link[2:]))
	fifo := strings.Repeat("12", 20)
	os.MkdirAll(filepath.Join(stage, fifo[:2]), 0o755)
	if err := syscall.Mkfifo(filepath.Join(stage, fifo[:2], fifo[2:]), 0o644); err != nil {
		t.Fatal(err)
	}
	// A fan-out directory that is a link out of the shadow.
	os.Symlink(filepath.Dir(secret), filepath.Join(stage, "34"))
	// Pack one with pack two's index: the index is never trusted.
	data1, _ := os.ReadFile(pk1 + ".pack")
	idx2, _ := os.ReadFile(pk2 + ".idx")
	put("pack/pack-forged.pack", data1)
	put("pack/pack-forged.idx", idx2)

	done := make(chan []string)
	go func() { done <- sh.ImportObjects(context.Background(), false) }()
	var notes []string
	select {
	case notes = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("importObjects stalled (a FIFO in the shadow?)")
	}
	t.Logf("notes: %q", notes)

	if got := hostGit(t, proj, "cat-file", "-p", good); got != "new content" {
		t.Errorf("the good object: %q", got)
	}
	if after, _ := os.ReadFile(existingPath); string(after) != string(before) {
		t.Errorf("an existing object was replaced")
	}
	for _, name := range []string{fake, junk, link, fifo} {
		if _, err := os.Lstat(filepath.Join(dotgit, "objects", name[:2], name[2:])); err == nil {
			t.Errorf("object %s was imported", name)
		}
	}
	if !strings.Contains(strings.Join(notes, " "), "not what their names say") {
		t.Errorf("the refusals are not said: %q", notes)
	}
	// The forged pack went in under the name index-pack computed, with
	// the index of its own content: p1 is readable, p2 is not claimed.
	if got := hostGit(t, proj, "cat-file", "-p", p1); got != "pack one" {
		t.Errorf("p1 from the imported pack: %q", got)
	}
	if out, err := exec.Command("git", "-C", proj, "cat-file", "-e", p2).CombinedOutput(); err == nil {
		t.Errorf("p2 is claimed by a forged index: %s", out)
	}
	if out, err := exec.Command("git", "-C", proj, "fsck", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("host fsck after the import: %v\n%s", err, out)
	}
	// What was imported or refused left the shadow; the alternate stays.
	ents, _ := os.ReadDir(stage)
	for _, e := range ents {
		if n := e.Name(); n != "info" && n != "pack" && n != inner.GitObjectsBase && n != "34" {
			t.Errorf("left in the shadow: %s", n)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(stage, "info", "alternates")); strings.TrimSpace(string(b)) != filepath.Join(dotgit, "objects", inner.GitObjectsBase) {
		t.Errorf("alternates: %q", b)
	}
}
