package gitsafe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestOutputBounded: git output past MaxOutput (a 64 MiB blob the agent
// could have written) is not read whole: the call fails with an error
// naming the limit, and the heap stays bounded; output under it is read.
func TestOutputBounded(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("blob line\n"), 64<<20/10), 0o644); err != nil {
		t.Fatal(err)
	}
	sha, err := Output(Command(context.Background(), dir, "hash-object", "-w", "big"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := Output(Command(context.Background(), dir, "cat-file", "-p", strings.TrimSpace(string(sha))))
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB allocated reading a 64 MiB blob", allocated>>20)
	if !errors.Is(err, ErrOutputTooLarge) || !strings.Contains(err.Error(), "git cat-file -p") || !strings.Contains(err.Error(), "more than 16 MiB, the limit harness reads") || out != nil {
		t.Errorf("a 64 MiB output: %d bytes, %v", len(out), err)
	}
	if allocated > 48<<20 {
		t.Errorf("reading git's 64 MiB output allocated %d MiB", allocated>>20)
	}
	if out, err := Output(Command(context.Background(), dir, "rev-parse", "--show-toplevel")); err != nil || len(out) == 0 {
		t.Errorf("a small output: %q, %v", out, err)
	}
}
