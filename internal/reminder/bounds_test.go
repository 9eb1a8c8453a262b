package reminder

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/gitsafe"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestHostGitBounded: the host git runner does not read an output past
// gitsafe.MaxOutput (here a 64 MiB blob) whole; it fails naming the limit.
func TestHostGitBounded(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("blob line\n"), 64<<20/10), 0o644)
	sha, err := exec.Command("git", "-C", dir, "hash-object", "-w", "big").Output()
	if err != nil {
		t.Fatal(err)
	}
	out, err := HostGit(dir)(context.Background(), []string{"cat-file", "-p", strings.TrimSpace(string(sha))})
	if !errors.Is(err, gitsafe.ErrOutputTooLarge) || len(out) > gitsafe.MaxOutput {
		t.Errorf("a 64 MiB output: %d MiB read, %v", len(out)>>20, err)
	}
}
