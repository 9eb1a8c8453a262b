package gitsafe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/shellquote"
)

// TestNothingPlantedRuns: a repository whose config names an fsmonitor, a
// hooks path and a pager, and an attributes file naming a clean filter,
// runs none of them through Command (status, add) or Shell (status in a
// shell), and the host's GIT_* variables do not reach git.
func TestNothingPlantedRuns(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	mark := filepath.Join(t.TempDir(), "ran")
	plant := "touch " + shellquote.Quote(mark)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "core.fsmonitor", plant)
	git("config", "core.pager", plant)
	git("config", "filter.x.clean", plant)
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	os.WriteFile(filepath.Join(dir, "hooks", "pre-commit"), []byte("#!/bin/sh\n"+plant+"\n"), 0o755)
	git("config", "core.hooksPath", "hooks")
	attrs := filepath.Join(t.TempDir(), "attributes")
	os.WriteFile(attrs, []byte("* filter=x\n"), 0o644)
	git("config", "core.attributesFile", attrs)
	os.WriteFile(filepath.Join(dir, "a"), []byte("a\n"), 0o644)

	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	for _, args := range [][]string{{"status", "--porcelain"}, {"add", "a"}, {"commit", "-qm", "x", "--author", "a <a@b>"}, {"log"}} {
		cmd := Command(context.Background(), dir, args...)
		cmd.Env = append(cmd.Env, "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	sh := exec.Command("/bin/sh", "-c", Shell("status", "--porcelain"))
	sh.Dir = dir
	sh.Env = Command(context.Background(), dir).Env
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", Shell("status"), err, out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git run by gitsafe ran a program the repository's configuration named")
	}
	if !strings.HasPrefix(Shell("it's"), "git -c core.fsmonitor=false") || !strings.HasSuffix(Shell("it's"), `'it'\''s'`) {
		t.Errorf("Shell = %s", Shell("it's"))
	}
}
