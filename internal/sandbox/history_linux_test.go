package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/shellquote"
	"github.com/harness-dev/harness/internal/testenv"
)

// History only grows (#41): a commit and a tag made by a command inside
// survive every later command's attempt to destroy them, as seen by the
// host's git: the commit, its tree and blobs are readable, the branch
// and the tags point where they did (or the loss is reported with the
// commit id), refs/replace, shallow and grafts never change what the
// host reads, and git fsck --full passes after every command. Each
// attack also runs in the same command as the commit ("same command"),
// where only the watch on the shadow's objects stands between the
// command and its own objects: there the commit must survive too, or at
// least its loss be reported with its id, and fsck must pass.
//
// Run as root and, re-executed, as nobody.
func TestHistoryOnlyGrows(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	const evil = "evil\n"
	attacks := []struct{ name, script string }{
		{"rm -rf .git", "rm -rf .git 2>/dev/null; true"},
		{"delete objects and refs", "rm -rf .git/objects/* .git/refs/* .git/packed-refs 2>/dev/null; true"},
		{"find -delete", "find .git -type f -delete 2>/dev/null; true"},
		{"overwrite objects", `for f in $(find .git/objects -type f 2>/dev/null); do chmod u+w "$f" 2>/dev/null; printf garbage > "$f" 2>/dev/null; done; true`},
		{"repack, delete the packs", "git repack -q -a -d 2>/dev/null; rm -f .git/objects/pack/* .git/objects/.harness-base/pack/* 2>/dev/null; git prune --expire=now 2>/dev/null; true"},
		{"orphan branch, reflog expire, gc", "git checkout -q --orphan wipe && git commit -q --allow-empty -m wipe && git branch -D main >/dev/null; git tag -d v1 v2 >/dev/null; git reflog expire --expire=now --all; git gc -q --prune=now 2>/dev/null; true"},
		{"refs at missing objects", `c=$(printf 'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent %s\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nx\n' $(git rev-parse HEAD) | git hash-object -t commit --literally -w --stdin); t=$(printf 'tree 1111111111111111111111111111111111111111\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\ny\n' | git hash-object -t commit --literally -w --stdin); rm -f .git/objects/4b/825dc642cb6eb9a060e54bf8d69288fbee4904; echo $t > .git/refs/heads/main; echo 2222222222222222222222222222222222222222 > .git/refs/tags/v2; echo $c > .git/refs/heads/other; true`},
		{"replace a committed blob", "git replace $(git rev-parse HEAD:d.txt) $(printf " + shellquote.Quote(evil) + " | git hash-object -w --stdin) && git replace -f $(git rev-parse HEAD~1:a.txt) $(git rev-parse HEAD:d.txt); true"},
		{"tags moved and deleted", "git tag -f v1 HEAD >/dev/null && git tag -d v2 >/dev/null; true"},
		{"shallow and grafts", "git rev-parse HEAD > .git/shallow; mkdir -p .git/info 2>/dev/null; git rev-parse HEAD > .git/info/grafts 2>/dev/null; true"},
		{"notes deleted", "git update-ref -d refs/notes/commits; true"},
		// Objects whose links are broken on purpose: a tree naming a blob
		// that does not exist and a commit of it, loose, and the same in
		// a pack, each on a branch. The refs never reach the host, but a
		// reflog line naming only the commit would, and git fsck --full
		// walks reflogs as it walks refs.
		{"objects linking to missing ones", `t=$(printf '100644 blob 1111111111111111111111111111111111111111\tx\n' | git mktree --missing) && c=$(git commit-tree -m x $t) && git update-ref refs/heads/broken $c && p=$(printf '100644 blob 2222222222222222222222222222222222222222\ty\n' | git mktree --missing) && d=$(git commit-tree -m y $p) && printf '%s\n%s\n' $p $d | git pack-objects -q .git/objects/pack/pack >/dev/null && git update-ref refs/heads/broken2 $d; true`},
	}
	type when struct {
		name string
		same bool
	}
	for _, backend := range []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock} {
		for _, w := range []when{{"next command", false}, {"same command", true}} {
			for _, a := range attacks {
				t.Run(backend+"/"+w.name+"/"+a.name, func(t *testing.T) {
					historyAttack(t, backend, a.script, w.same)
				})
			}
		}
	}
	if os.Getuid() != 0 || os.Getenv(historyNobodyEnv) != "" {
		return
	}
	setpriv, bin := testenv.NobodyBinary(t, outsideBase(), "TestHistoryOnlyGrows")
	cmd := testenv.AsNobody(setpriv, bin, nil, historyNobodyEnv+"=1")
	// The session's backend, both attack timings: the uid is what differs.
	cmd.Args = append(cmd.Args, "-test.run=^TestHistoryOnlyGrows$/^bwrap$/_command$", "-test.count=1", "-test.v")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS: TestHistoryOnlyGrows/bwrap/") != 2*len(attacks) {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// historyNobodyEnv marks the re-executed run as nobody (no third level).
const historyNobodyEnv = "HARNESS_SANDBOX_TEST_HISTORY_NOBODY"

func historyAttack(t *testing.T, backend, attack string, same bool) {
	base, proj := gitProject(t)
	os.MkdirAll(filepath.Join(base, "home"), 0o755)
	// History from before the session, loose and packed, and a tag.
	os.WriteFile(filepath.Join(proj, "b.txt"), []byte("two\n"), 0o644)
	hostGit(t, proj, "add", "b.txt")
	hostGit(t, proj, "commit", "-q", "-m", "second")
	hostGit(t, proj, "tag", "v1")
	hostGit(t, proj, "gc", "-q")
	start := strings.Fields(hostGit(t, proj, "rev-list", "--all"))
	v1 := hostGit(t, proj, "rev-parse", "v1")
	sb := openGitTest(t, backend, proj)

	commit := "echo four > d.txt && git add d.txt && git commit -q -m fourth && git tag -a -m tagged v2 && git notes add -m noted HEAD && git rev-parse HEAD"
	var inside, out string
	if same {
		r := run(t, sb, commit+" && "+attack)
		out = string(r.Output)
		inside = strings.Fields(out + " x")[0]
	} else {
		r := run(t, sb, commit)
		inside = strings.TrimSpace(string(r.Output))
		if r.ExitCode != 0 {
			t.Fatalf("commit inside: exit %d\n%s", r.ExitCode, r.Output)
		}
		hostFsck(t, proj, "after the commit")
		out = string(run(t, sb, attack).Output)
	}
	if len(inside) != 40 {
		t.Fatalf("commit inside printed %q\n%s", inside, out)
	}
	t.Logf("command output:\n%s", out)
	hostFsck(t, proj, "after the attack")
	for _, c := range start {
		if e := hostGitErr(proj, "cat-file", "-e", c+"^{commit}"); e != nil {
			t.Errorf("commit %s from before the session is gone: %v", c, e)
		}
	}
	kept := hostGitErr(proj, "cat-file", "-e", inside+"^{tree}") == nil &&
		hostGitErr(proj, "cat-file", "-e", inside+":d.txt") == nil
	switch {
	case kept:
	case same && strings.Contains(out, inside):
		t.Logf("the commit made in the same command is lost, and reported with its id")
	default:
		t.Errorf("the commit made inside (%s), its tree or blob is not readable on the host", inside)
	}
	// Refs made and destroyed in the same command never reached the
	// host: only the objects are asked for then.
	if kept && !same {
		if got := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/heads/main")); got != inside && !strings.Contains(out, inside) {
			t.Errorf("main is at %q on the host, not at the commit made inside (%s), and the output does not say so:\n%s", got, inside, out)
		}
		if got := hostOut(proj, "cat-file", "blob", inside+":d.txt"); got != "four\n" {
			t.Errorf("d.txt of the commit made inside reads %q on the host", got)
		}
		if got := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/tags/v2^{commit}")); got != inside {
			t.Errorf("tag v2 (made inside) is at %q on the host, want %s", got, inside)
		}
		if n := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/notes/commits")); n == "" && !strings.Contains(out, "refs/notes/commits") {
			t.Errorf("the notes ref made inside is gone and not reported:\n%s", out)
		}
	}
	if got := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/tags/v1")); got != v1 {
		t.Errorf("tag v1 is at %q on the host, want %s", got, v1)
	}
	if got := hostOut(proj, "cat-file", "blob", start[0]+":a.txt"); got != "one\n" {
		t.Errorf("a.txt of the first commit reads %q on the host (replaced?)", got)
	}
	if refs := hostOut(proj, "for-each-ref", "refs/replace/"); refs != "" {
		t.Errorf("refs/replace on the host: %s", refs)
	}
	if _, err := os.Lstat(filepath.Join(proj, ".git", "shallow")); err == nil {
		t.Errorf("the host repository became shallow")
	}
	if _, err := os.Lstat(filepath.Join(proj, ".git", "info", "grafts")); err == nil {
		t.Errorf("the host repository has grafts")
	}
	if got := strings.Fields(hostOut(proj, "rev-list", "--all")); len(got) < len(start) {
		t.Errorf("host rev-list --all: %d commits, %d before the session", len(got), len(start))
	}
}

func hostFsck(t *testing.T, proj, when string) {
	t.Helper()
	cmd := exec.Command("git", "-C", proj, "fsck", "--full")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git fsck --full on the host %s: %v\n%s", when, err, out)
	}
}

func hostGitErr(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	return cmd.Run()
}

func hostOut(dir string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, _ := cmd.Output()
	return string(out)
}

// TestHistoryWhileRunning: what a command that is still running (a
// background job) commits is on the host as it is made, and the host's
// repository is whole at every moment: its objects are readable before
// the command ends, no ref on the host points at an object it lacks
// (fsck passes while it runs), and another command ending meanwhile
// brings its ref over.
func TestHistoryWhileRunning(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			base, proj := gitProject(t)
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			sb := openGitTest(t, backend, proj)
			script := `b=$(echo bg | git hash-object -w --stdin) && t=$(printf '100644 blob %s\tbg.txt\n' $b | git mktree) && c=$(git commit-tree -p HEAD -m bg $t) && git update-ref refs/heads/bg $c && echo $c > bg.done && sleep 4`
			done := make(chan *Result)
			go func() {
				r, err := sb.Run(context.Background(), Cmd{Script: script})
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			var c string
			for i := 0; i < 100 && c == ""; i++ {
				time.Sleep(50 * time.Millisecond)
				if b, err := os.ReadFile(filepath.Join(proj, "bg.done")); err == nil && len(strings.TrimSpace(string(b))) == 40 {
					c = strings.TrimSpace(string(b))
				}
			}
			if c == "" {
				t.Fatal("the background command did not commit")
			}
			time.Sleep(200 * time.Millisecond) // the watch's turn
			if e := hostGitErr(proj, "cat-file", "-e", c+":bg.txt"); e != nil {
				t.Errorf("the commit of a running command is not readable on the host: %v", e)
			}
			hostFsck(t, proj, "while a command that committed runs")
			// Another command ends meanwhile: the ref comes over.
			run(t, sb, "true")
			if got := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/heads/bg")); got != c {
				t.Errorf("refs/heads/bg on the host after another command: %q, want %s", got, c)
			}
			hostFsck(t, proj, "after another command")
			<-done
			if got := strings.TrimSpace(hostOut(proj, "rev-parse", "-q", "--verify", "refs/heads/bg")); got != c {
				t.Errorf("refs/heads/bg on the host at the end: %q, want %s", got, c)
			}
			hostFsck(t, proj, "at the end")
		})
	}
}
