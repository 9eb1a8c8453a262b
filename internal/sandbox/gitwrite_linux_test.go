package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/shellquote"
)

// hostGit runs git on the host in dir and returns its trimmed output.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitProject makes a repository with one commit under a fresh directory
// outside /tmp and returns the directory holding it.
func gitProject(t *testing.T) (base, proj string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, testenv.Git, "git is not installed")
	}
	base, err := os.MkdirTemp(outsideBase(), "harness-git-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj = filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	hostGit(t, proj, "init", "-q", "-b", "main")
	hostGit(t, proj, "config", "user.name", "Test")
	hostGit(t, proj, "config", "user.email", "test@example.com")
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("one\n"), 0o644)
	hostGit(t, proj, "add", "a.txt")
	hostGit(t, proj, "commit", "-q", "-m", "first")
	return base, proj
}

func openGitTest(t *testing.T, backend, proj string) Sandbox {
	t.Helper()
	b, opts := testVariant(backend)
	requireBackend(t, b)
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: filepath.Join(filepath.Dir(proj), "home")})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(context.Background(), walls.NewLive(p), b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

func run(t *testing.T, sb Sandbox, script string) *Result {
	t.Helper()
	r, err := sb.Run(context.Background(), Cmd{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var gitBackends = []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand}

// TestGitWritesWork: add, commit and switch -c inside reach the host's
// repository, and nothing is reported as tampering.
func TestGitWritesWork(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range gitBackends {
		t.Run(backend, func(t *testing.T) {
			base, proj := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			sb := openGitTest(t, backend, proj)
			r := run(t, sb, "echo two >> a.txt && echo new > b.txt && git add a.txt b.txt && git commit -q -m second && git switch -q -c feature && echo three >> b.txt && git commit -q -am third && git log --oneline | wc -l")
			if r.ExitCode != 0 || strings.TrimSpace(string(r.Output)) != "3" {
				t.Fatalf("exit %d\n%s", r.ExitCode, r.Output)
			}
			if len(r.Tampered) > 0 || len(r.GitMoves) > 0 {
				t.Errorf("tampered %v, moves %v: want none for ordinary commits", r.Tampered, r.GitMoves)
			}
			if got := hostGit(t, proj, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature" {
				t.Errorf("host HEAD is on %q, want feature", got)
			}
			if got := hostGit(t, proj, "log", "--format=%s", "main"); got != "second\nfirst" {
				t.Errorf("host main log %q", got)
			}
			if got := hostGit(t, proj, "status", "--porcelain"); got != "" {
				t.Errorf("host status not clean (the index did not come back?):\n%s", got)
			}
			// The host's changes reach the next command.
			hostGit(t, proj, "switch", "-q", "main")
			r = run(t, sb, "git rev-parse --abbrev-ref HEAD && git status --porcelain")
			if strings.TrimSpace(string(r.Output)) != "main" {
				t.Errorf("inside after a host switch: %s", r.Output)
			}
		})
	}
}

// TestGitWritesHoldTheWalls: what can make git run a program stays
// read-only, and what a command plants elsewhere in the git directory
// never reaches the host.
func TestGitWritesHoldTheWalls(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range gitBackends {
		t.Run(backend, func(t *testing.T) {
			base, proj := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			dotgit := filepath.Join(proj, ".git")
			config, _ := os.ReadFile(filepath.Join(dotgit, "config"))
			head, _ := os.ReadFile(filepath.Join(dotgit, "HEAD"))
			sb := openGitTest(t, backend, proj)
			victim := filepath.Join(base, "home", "victim")
			os.WriteFile(victim, []byte("keep\n"), 0o644)
			for i, attack := range []string{
				// Links for the host's copies to write through.
				"rm -f .git/index && ln -s " + shellquote.Quote(victim) + " .git/index",
				"ln -s " + shellquote.Quote(filepath.Join(base, "home")) + " .git/commondir",
				"ls -a /tmp | grep -e -git- && echo SHADOW-VISIBLE; true",
				"printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
				"git config core.fsmonitor 'echo pwned'",
				"git config --local alias.st '!echo pwned'",
				"echo '[core]fsmonitor=echo pwned' >> .git/config",
				"mv .git/config .git/config.old",
				"rm -rf .git/hooks",
				"mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes",
				"echo " + shellquote.Quote(base) + " > .git/commondir",
				"printf '[core]\\n\\tfsmonitor = echo pwned\\n' > .git/config.worktree",
				"mkdir -p .git/rebase-merge && echo 'exec echo pwned' > .git/rebase-merge/git-rebase-todo",
				"printf 'ref: refs/heads/../../config\\n' > .git/HEAD",
				"ln -sf /etc/passwd .git/ORIG_HEAD",
				"printf 'garbage' > .git/index",
			} {
				if r := run(t, sb, attack); i == 2 && strings.Contains(string(r.Output), "SHADOW-VISIBLE") {
					t.Errorf("the git shadow is visible in the private /tmp:\n%s", r.Output)
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("a link planted in .git made the host write %s: %q", victim, b)
			}
			if ents, _ := os.ReadDir(filepath.Join(base, "home")); len(ents) != 1 {
				t.Errorf("the host wrote into a linked directory: %v", ents)
			}
			after, _ := os.ReadFile(filepath.Join(dotgit, "config"))
			if string(after) != string(config) {
				t.Errorf("host config changed:\n%s", after)
			}
			if h, _ := os.ReadFile(filepath.Join(dotgit, "HEAD")); string(h) != string(head) {
				t.Errorf("host HEAD changed to %q", h)
			}
			for _, name := range []string{"hooks/pre-commit", "commondir", "config.worktree", "rebase-merge", "config.old"} {
				if _, err := os.Lstat(filepath.Join(dotgit, name)); err == nil {
					t.Errorf("host .git/%s exists: a command planted it", name)
				}
			}
			if st, err := os.Lstat(filepath.Join(dotgit, "ORIG_HEAD")); err == nil && st.Mode()&os.ModeSymlink != 0 {
				t.Errorf("host .git/ORIG_HEAD became a symlink")
			}
			if _, err := os.Lstat(filepath.Join(dotgit, "hooks")); err != nil {
				t.Errorf("host .git/hooks is gone: %v", err)
			}
			if got := hostGit(t, proj, "status", "--porcelain"); got != "" {
				t.Errorf("host status after the attacks:\n%s", got)
			}
			// git push is refused with a message.
			hostGit(t, proj, "remote", "add", "origin", filepath.Join(base, "remote.git"))
			r := run(t, sb, "git push origin main")
			if r.ExitCode == 0 || !strings.Contains(string(r.Output), "harness refuses git push inside the sandbox") {
				t.Errorf("git push: exit %d\n%s", r.ExitCode, r.Output)
			}
		})
	}
}

// TestGitPointerFileStaysReadOnly: in a worktree (.git a pointer file),
// commits work and the pointer file, the gitdir's pointers and the
// common directory's config stay as they were.
func TestGitPointerFileStaysReadOnly(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			base, main := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			wt := filepath.Join(base, "wt")
			hostGit(t, main, "worktree", "add", "-q", "-b", "side", wt)
			pointer, _ := os.ReadFile(filepath.Join(wt, ".git"))
			config, _ := os.ReadFile(filepath.Join(main, ".git", "config"))
			sb := openGitTest(t, backend, wt)
			r := run(t, sb, "echo side > s.txt && git add s.txt && git commit -q -m side && git switch -q -c side2 && echo ok")
			if !strings.Contains(string(r.Output), "ok") {
				t.Fatalf("commit in a worktree: exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := hostGit(t, wt, "log", "--format=%s", "-1", "side2"); got != "side" {
				t.Errorf("host worktree log %q", got)
			}
			if got := hostGit(t, main, "rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
				t.Errorf("the main worktree's HEAD moved to %q", got)
			}
			run(t, sb, "echo 'gitdir: "+base+"/evil' > .git; git config core.fsmonitor 'echo pwned'; echo x > "+shellquote.Quote(filepath.Join(main, ".git", "worktrees", "wt", "commondir")))
			if b, _ := os.ReadFile(filepath.Join(wt, ".git")); string(b) != string(pointer) {
				t.Errorf("pointer file rewritten: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(main, ".git", "config")); string(b) != string(config) {
				t.Errorf("common config changed: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(main, ".git", "worktrees", "wt", "commondir")); strings.TrimSpace(string(b)) != "../.." {
				t.Errorf("worktree commondir changed: %q", b)
			}
		})
	}
}

// TestGitRewriteReported: a reset --hard to an older commit and a deleted
// branch are reported with the hash to return to.
func TestGitRewriteReported(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			base, proj := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			sb := openGitTest(t, backend, proj)
			run(t, sb, "echo 2 >> a.txt && git commit -q -am second && git branch keep")
			second := hostGit(t, proj, "rev-parse", "HEAD")
			r := run(t, sb, "git reset -q --hard HEAD~1")
			if len(r.GitMoves) != 1 || r.GitMoves[0].Ref != "refs/heads/main" || r.GitMoves[0].Old != second {
				t.Fatalf("moves %+v, want refs/heads/main from %s\n%s", r.GitMoves, second, r.Output)
			}
			if !strings.Contains(string(r.Output), second) || !strings.Contains(string(r.Output), "moved off its history") {
				t.Errorf("output does not give the way back:\n%s", r.Output)
			}
			r = run(t, sb, "git branch -q -D keep")
			if len(r.GitMoves) != 1 || r.GitMoves[0].Ref != "refs/heads/keep" || r.GitMoves[0].New != "" || !strings.Contains(string(r.Output), "git branch keep "+second) {
				t.Errorf("deleted branch: moves %+v\n%s", r.GitMoves, r.Output)
			}
			// Moving forward is not reported.
			r = run(t, sb, "echo 3 >> a.txt && git commit -q -am third")
			if len(r.GitMoves) != 0 {
				t.Errorf("a commit was reported as a rewrite: %+v", r.GitMoves)
			}
			// The way back works from the host.
			hostGit(t, proj, "reset", "-q", "--hard", second)
			// Pruning cannot take the old commit: objects are append-only,
			// so the way back is still there.
			r = run(t, sb, "git branch -q doomed HEAD~1 >/dev/null; git reset -q --hard HEAD~1 && git reflog expire --expire=now --all && git branch -q -D doomed keep 2>/dev/null; git gc -q --prune=now")
			if len(r.GitMoves) == 0 || r.GitMoves[0].Lost || !strings.Contains(string(r.Output), "still in the repository") {
				t.Errorf("pruned: moves %+v\n%s", r.GitMoves, r.Output)
			}
			hostGit(t, proj, "cat-file", "-e", second+"^{commit}")
		})
	}
}

// TestGitHistoryCannotBeDestroyed: every way a command inside can try to
// delete or rewrite the repository's history (#26's attempts and more)
// leaves every commit on the host, checked with the host's git, and the
// commits made inside during the session reach the host intact.
func TestGitHistoryCannotBeDestroyed(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	attacks := map[string]string{
		"rm -rf .git":               "rm -rf .git 2>/dev/null; true",
		"reflog expire + gc":        "git reset -q --hard HEAD~1 && git reflog expire --expire=now --all && git gc -q --prune=now",
		"delete objects/*":          "rm -rf .git/objects/* 2>/dev/null; true",
		"find -delete":              "find .git/objects -type f -delete 2>/dev/null; true",
		"overwrite an object":       `for f in $(find .git/objects/.harness-base .git/objects -type f -path '*/[0-9a-f][0-9a-f]/*' 2>/dev/null); do chmod u+w "$f" 2>/dev/null; printf garbage > "$f" 2>/dev/null; done; true`,
		"repack, delete packs":      "git repack -q -a -d && rm -f .git/objects/pack/* .git/objects/.harness-base/pack/* 2>/dev/null; git prune --expire=now; true",
		"branch -D + gc aggressive": "git checkout -q --detach && git branch -D main side >/dev/null && git reflog expire --expire=now --all && git gc -q --aggressive --prune=now",
		"alternates removed":        "rm -f .git/objects/info/alternates && git gc -q --prune=now; true",
		"unmount the base":          "umount .git/objects/.harness-base 2>/dev/null; rm -rf .git/objects/.harness-base/* 2>/dev/null; true",
	}
	for _, backend := range gitBackends {
		for name, attack := range attacks {
			t.Run(backend+"/"+name, func(t *testing.T) {
				base, proj := gitProject(t)
				os.MkdirAll(filepath.Join(base, "home"), 0o755)
				// History made on the host, in loose objects and in a pack.
				os.WriteFile(filepath.Join(proj, "b.txt"), []byte("two\n"), 0o644)
				hostGit(t, proj, "add", "b.txt")
				hostGit(t, proj, "commit", "-q", "-m", "second")
				hostGit(t, proj, "branch", "side")
				hostGit(t, proj, "gc", "-q")
				os.WriteFile(filepath.Join(proj, "c.txt"), []byte("three\n"), 0o644)
				hostGit(t, proj, "add", "c.txt")
				hostGit(t, proj, "commit", "-q", "-m", "third")
				sb := openGitTest(t, backend, proj)
				// A commit made inside, before the attack: it too must stay.
				r := run(t, sb, "echo four > d.txt && git add d.txt && git commit -q -m fourth && git rev-parse HEAD")
				inside := strings.TrimSpace(string(r.Output))
				if r.ExitCode != 0 || len(inside) != 40 {
					t.Fatalf("commit inside: exit %d\n%s", r.ExitCode, r.Output)
				}
				commits := strings.Fields(hostGit(t, proj, "rev-list", "--all"))
				if len(commits) != 4 {
					t.Fatalf("host has %d commits before the attack, want 4", len(commits))
				}
				run(t, sb, attack)
				for _, c := range commits {
					cmd := exec.Command("git", "-C", proj, "cat-file", "-e", c+"^{commit}")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("commit %s is gone from the host after %q: %v %s", c, attack, err, out)
					}
				}
				// Everything every old commit reaches is readable: fsck from them.
				fsck := exec.Command("git", append([]string{"-C", proj, "fsck", "--no-dangling", "--connectivity-only"}, commits...)...)
				if out, err := fsck.CombinedOutput(); err != nil {
					t.Errorf("git fsck on the host after %q: %v\n%s", attack, err, out)
				}
				// A commit after the attack still works and reaches the host.
				r = run(t, sb, "git checkout -q -B after "+inside+" 2>&1 && echo five > e.txt && git add e.txt && git commit -q -m fifth && git rev-parse HEAD")
				if r.ExitCode != 0 {
					t.Logf("commit after %q failed inside (the attack broke the view inside, not the host): %s", name, r.Output)
					return
				}
				next := strings.TrimSpace(string(r.Output))
				if got := hostGit(t, proj, "cat-file", "-t", next); got != "commit" {
					t.Errorf("commit made after the attack is %q on the host", got)
				}
			})
		}
	}
}

// TestGitEverydayWorkflows: with objects append-only, the git people use
// inside keeps working and reaches the host: stash, rebase, gc, worktrees.
func TestGitEverydayWorkflows(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			base, proj := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			sb := openGitTest(t, backend, proj)
			script := strings.Join([]string{
				"set -e",
				"git switch -q -c topic",
				"echo t > t.txt && git add t.txt && git commit -q -m topic",
				"git switch -q main",
				"echo m > m.txt && git add m.txt && git commit -q -m main2",
				"echo wip >> a.txt && git stash -q && git stash pop -q && git checkout -q -- a.txt",
				"git switch -q topic && git rebase -q main",
				"git gc -q --prune=now",
				"git worktree add -q .wt2 -b wt2 && git -C .wt2 log -1 --format=%s",
				"git log --format=%s topic | tr '\\n' ' '",
			}, "\n")
			r := run(t, sb, script)
			if r.ExitCode != 0 {
				t.Fatalf("exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := hostGit(t, proj, "log", "--format=%s", "topic"); got != "topic\nmain2\nfirst" {
				t.Errorf("host topic log %q, want the rebased history", got)
			}
			if out, err := exec.Command("git", "-C", proj, "fsck", "--no-dangling").CombinedOutput(); err != nil {
				t.Errorf("host fsck: %v\n%s", err, out)
			}
		})
	}
}
