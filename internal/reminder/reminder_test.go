package reminder

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("x\n"), 0o644)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-qm", "init")
	return dir
}

var fixed = func() time.Time { return time.Date(2025, 3, 4, 5, 6, 59, 0, time.UTC) }

func TestFormat(t *testing.T) {
	got := Format(Facts{Time: fixed().Truncate(time.Minute), Git: true, Branch: "main", Todos: "- [ ] a",
		Changes: []Change{{"a.go", KindModified}}})
	for _, want := range []string{"<context>", "2025-03-04 05:06 UTC", "git branch: main", "<todos>\n- [ ] a\n</todos>", "- a.go (modified)", "read them again before editing"} {
		if !strings.Contains(got, want) {
			t.Errorf("reminder lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "<context>") > strings.Index(got, "<todos>") || strings.Index(got, "<todos>") > strings.Index(got, "<file_changes>") {
		t.Error("sections out of order")
	}
	if strings.Contains(got, ":59") {
		t.Error("time not to the minute")
	}
	if none := Format(Facts{Time: fixed()}); !strings.Contains(none, "not a git repository") || strings.Contains(none, "<todos>") || strings.Contains(none, "<file_changes>") {
		t.Errorf("outside git, no todos: %s", none)
	}
}

func TestBuildFileChanges(t *testing.T) {
	dir := repo(t)
	b := New(dir, fixed)
	ctx := context.Background()
	first := b.Build(ctx, "")
	if !strings.Contains(first, "git branch: main") || strings.Contains(first, "<file_changes>") {
		t.Fatalf("first reminder: %s", first)
	}
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // edited\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package a\n"), 0o644)
	os.Remove(filepath.Join(dir, "gone.txt"))
	second := b.Build(ctx, "")
	for _, want := range []string{"- a.go (modified)", "- new.go (new)", "- gone.txt (deleted)"} {
		if !strings.Contains(second, want) {
			t.Errorf("second reminder lacks %q:\n%s", want, second)
		}
	}
	if third := b.Build(ctx, ""); strings.Contains(third, "<file_changes>") {
		t.Errorf("nothing changed but the reminder lists changes:\n%s", third)
	}
	// Edited again: the status line is the same, the hash is not.
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // twice\n"), 0o644)
	if fourth := b.Build(ctx, ""); !strings.Contains(fourth, "- a.go (modified)") || strings.Contains(fourth, "new.go") {
		t.Errorf("second edit of a.go:\n%s", fourth)
	}
}

func TestBuildDetachedAndNoRepo(t *testing.T) {
	dir := repo(t)
	git(t, dir, "checkout", "-q", "--detach")
	if got := New(dir, fixed).Build(context.Background(), ""); !strings.Contains(got, "git branch: (detached)") {
		t.Errorf("detached: %s", got)
	}
	if got := New(t.TempDir(), fixed).Build(context.Background(), ""); !strings.Contains(got, "not a git repository") {
		t.Errorf("no repo: %s", got)
	}
}

// A project can plant an fsmonitor command or hooks in its git config; the
// harness's status call must not run them.
func TestGitRunsNoPlantedCode(t *testing.T) {
	dir := repo(t)
	canary := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(dir, "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ntouch "+canary+"\n"), 0o755)
	git(t, dir, "config", "core.fsmonitor", script)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("changed\n"), 0o644)
	b := New(dir, fixed)
	b.Build(context.Background(), "")
	b.Build(context.Background(), "")
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("git status ran the project's fsmonitor command")
	}
}

// The agent's own writes through the file tools are not sent back to be
// re-read; a change made after them by anything else is.
func TestOwnWritesAreNotReported(t *testing.T) {
	dir := repo(t)
	b := New(dir, fixed)
	ctx := context.Background()
	b.Build(ctx, "")
	path := filepath.Join(dir, "a.go")
	os.WriteFile(path, []byte("package a // by edit_file\n"), 0o644)
	b.Wrote(path)
	os.WriteFile(filepath.Join(dir, "gen.go"), []byte("package a\n"), 0o644) // by a command
	got := b.Build(ctx, "")
	if strings.Contains(got, "a.go (modified)") || !strings.Contains(got, "gen.go (new)") {
		t.Errorf("own write reported, or the command's file not:\n%s", got)
	}

	// Written by the tool, then changed by a formatter: reported.
	os.WriteFile(path, []byte("package a // by edit_file again\n"), 0o644)
	b.Wrote(path)
	os.WriteFile(path, []byte("package a // reformatted\n"), 0o644)
	if got := b.Build(ctx, ""); !strings.Contains(got, "a.go (modified)") {
		t.Errorf("a change after the tool's write is not reported:\n%s", got)
	}
}

// Untracked entries that are not regular files (a link to /dev/zero, a
// FIFO) must not hang or exhaust the change check.
func TestChangeCheckOpensOnlyRegularFiles(t *testing.T) {
	dir := repo(t)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	if err := mkfifo(filepath.Join(dir, "fifo")); err != nil {
		t.Log("no FIFO:", err)
	}
	b := New(dir, fixed)
	done := make(chan string, 1)
	go func() {
		b.Build(context.Background(), "")
		os.Symlink("/dev/urandom", filepath.Join(dir, "zero2"))
		done <- b.Build(context.Background(), "")
	}()
	select {
	case got := <-done:
		if !strings.Contains(got, "- zero2 (new)") {
			t.Errorf("the new link is not reported:\n%s", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the change check hung on a link to a device or a FIFO")
	}
}

// SetGit replaces how git runs: a session's runs inside the walls.
func TestSetGit(t *testing.T) {
	b := New(t.TempDir(), fixed)
	var got []string
	b.SetGit(func(_ context.Context, args []string) ([]byte, error) {
		got = args
		return []byte("# branch.head feature\x00? x\x00"), nil
	})
	if out := b.Build(context.Background(), ""); !strings.Contains(out, "git branch: feature") || len(got) == 0 || got[0] != "status" {
		t.Errorf("SetGit not used: %v\n%s", got, out)
	}
}
