package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// TestRefreshNeverStopsShort: a repository created after 200,500 files
// (more than the old scan's 200,000-entry bound) is found and walled, by
// a command inside the walls; and one created deep in a tree whose
// directory times were set back (touch -d) is found too: the watch reads
// ctimes, which no command can set back.
func TestRefreshNeverStopsShort(t *testing.T) {
	t.Parallel() // see parallelTests in main_test.go
	if testing.Short() {
		t.Skip("creates 200,500 files")
	}
	base, proj := gitProject(t)
	os.MkdirAll(filepath.Join(base, "home"), 0o755)
	aaa := filepath.Join(proj, "aaa")
	os.Mkdir(aaa, 0o755)
	for i := 0; i < 200_500; i++ {
		f, err := os.Create(filepath.Join(aaa, fmt.Sprintf("f%06d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	os.MkdirAll(filepath.Join(proj, "deep", "a", "b", "c"), 0o755)
	sb := openGitTest(t, BackendBwrap, proj)
	ran := filepath.Join(base, "ran-fsmonitor")
	r := run(t, sb, "git init -q zzz && git -C zzz config core.fsmonitor 'touch "+ran+"; false' && echo ok")
	if !strings.Contains(string(r.Output), "ok") {
		t.Fatalf("git init: %s", r.Output)
	}
	if !foundPath(r.Found, filepath.Join(proj, "zzz", ".git")) {
		t.Errorf("zzz/.git not found after 200,500 files: %+v", r.Found)
	}
	// Walled from the next command on: its config cannot change.
	run(t, sb, "git -C zzz config core.fsmonitor 'echo changed' 2>/dev/null; true")
	if b, _ := os.ReadFile(filepath.Join(proj, "zzz", ".git", "config")); !strings.Contains(string(b), ran) {
		t.Errorf("zzz/.git/config was rewritten after it was found:\n%s", b)
	}
	// A repository deep in, with every directory time set back.
	old := time.Now().Add(-48 * time.Hour).Format("200601021504")
	r = run(t, sb, "mkdir deep/a/b/c/.git && echo '[core]' > deep/a/b/c/.git/config && echo 'ref: refs/heads/main' > deep/a/b/c/.git/HEAD && mkdir deep/a/b/c/.git/objects && touch -t "+old+" deep/a/b/c deep/a/b deep/a deep && echo ok")
	if !strings.Contains(string(r.Output), "ok") {
		t.Fatalf("%s", r.Output)
	}
	if !foundPath(r.Found, filepath.Join(proj, "deep", "a", "b", "c", ".git")) {
		t.Errorf("deep/a/b/c/.git with its directory times set back was not found: %+v", r.Found)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the fsmonitor ran on the host")
	}
}

func foundPath(fs []walls.Finding, path string) bool {
	for _, f := range fs {
		if f.Path == path {
			return true
		}
	}
	return false
}
