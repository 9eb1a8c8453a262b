package walls

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDirNeverFollowsLinks: every step through a Dir refuses a symlink,
// whether it leads outside or stays inside, and nothing is created or
// read at its target.
func TestDirNeverFollowsLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o600)
	os.Mkdir(filepath.Join(root, "real"), 0o755)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink("real", filepath.Join(root, "in"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "f"))
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, rel := range []string{"out", "in", "out/sub", "real/../out"} {
		for _, create := range []bool{false, true} {
			if sub, err := d.OpenPath(rel, create, 0o755); err == nil {
				sub.Close()
				t.Errorf("OpenPath(%q, create %v) went through a link", rel, create)
			}
		}
	}
	var le *LinkError
	if _, err := d.OpenPath("out/sub", true, 0o755); !errors.As(err, &le) || le.Path != filepath.Join(root, "out") {
		t.Errorf("OpenPath through a link: %v, want a LinkError naming it", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "sub")); err == nil {
		t.Error("a directory was made outside")
	}
	if f, _, err := d.OpenFile("f", nil); err == nil || !errors.Is(err, ErrSymlink) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenFile of a link: %v", err)
	}
	if _, err := d.OpenPath("../x", false, 0); err == nil {
		t.Error("OpenPath(../x) left the directory")
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if err := d.Remove(name); err == nil {
			t.Errorf("Remove(%q) accepted a name that is not one", name)
		}
	}
	if r, rel, ok := Under([]string{"/a/b", root}, filepath.Join(root, "x", "y")); !ok || r != root || rel != filepath.Join("x", "y") {
		t.Errorf("Under: %s %s %v", r, rel, ok)
	}
	if _, _, ok := Under([]string{root}, outside); ok {
		t.Error("Under: outside is under root")
	}
}
