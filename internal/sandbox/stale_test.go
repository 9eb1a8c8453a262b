package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRemoveStale: a session directory of a dead harness is removed at the
// next start; a live one's, and one naming no pid, stay.
func TestRemoveStale(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := filepath.Join(os.TempDir(), sessionPrefix+"999999999-1")
	live := filepath.Join(os.TempDir(), sessionPrefix+strconv.Itoa(os.Getpid())+"-1")
	old := filepath.Join(os.TempDir(), sessionPrefix+"12345")
	for _, d := range []string{dead, dead + "-git-1", live, old} {
		os.MkdirAll(filepath.Join(d, "x"), 0o700)
	}
	removeStale()
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if exists(dead) || exists(dead+"-git-1") {
		t.Error("a dead harness's directories stayed")
	}
	if !exists(live) || !exists(old) {
		t.Error("a live or unnamed directory was removed")
	}
}
