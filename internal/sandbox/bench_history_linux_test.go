package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// BenchmarkHistoryOverhead is the per-command cost of a session in a git
// repository (the git shadow, with history-only-grows: refs synced and
// checked, objects imported) against bare bwrap running the same script
// with the project bound read-write and nothing else done: `true`, and a
// commit. x-<variant> is the session's time over bare bwrap's; the issue
// asks for less than 1.5.
//
//	go test -run '^$' -bench HistoryOverhead -benchtime 100x ./internal/sandbox/
func BenchmarkHistoryOverhead(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap is not installed")
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	repo := func() string {
		dir, err := os.MkdirTemp(outsideBase(), "harness-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		proj := filepath.Join(dir, "proj")
		for _, args := range [][]string{{"init", "-q", proj}, {"-C", proj, "config", "user.email", "b@example.com"}, {"-C", proj, "config", "user.name", "B"}, {"-C", proj, "commit", "-q", "--allow-empty", "-m", "first"}} {
			cmd := exec.Command("git", args...)
			cmd.Env = gitEnv
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v %s", args, err, out)
			}
		}
		os.Mkdir(filepath.Join(dir, "home"), 0o755)
		return proj
	}
	bareDir, sessDir, ownDir := repo(), repo(), repo()
	bare := func(script string) {
		cmd := exec.Command(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--bind", bareDir, bareDir, "--chdir", bareDir, "--unshare-all", "--die-with-parent", "--", "/bin/sh", "-c", script)
		cmd.Env = gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare bwrap: %v %s", err, out)
		}
	}
	open := func(dir string, launcher bool) Sandbox {
		p, err := walls.NewPolicy(walls.PolicyOptions{Project: dir, Home: filepath.Join(filepath.Dir(dir), "home")})
		if err != nil {
			b.Fatal(err)
		}
		sb, err := Open(context.Background(), walls.NewLive(p), BackendBwrap, WithLauncher(launcher))
		if err != nil {
			b.Skip(err)
		}
		b.Cleanup(func() { sb.Close() })
		return sb
	}
	session, own := open(sessDir, true), open(ownDir, false)
	ctx := context.Background()
	commit := "echo x >> f && git add f && git -c user.email=b@example.com -c user.name=B commit -q -m c"
	var tBare, tSess, tOwn, cBare, cSess, cOwn time.Duration
	timed := func(total *time.Duration, f func()) {
		start := time.Now()
		f()
		*total += time.Since(start)
	}
	inSession := func(sb Sandbox, script string) func() {
		return func() {
			if r, err := sb.Run(ctx, Cmd{Script: script}); err != nil || r.ExitCode != 0 {
				b.Fatalf("%v %+v", err, r)
			}
		}
	}
	for b.Loop() {
		timed(&tBare, func() { bare("true") })
		timed(&tSess, inSession(session, "true"))
		timed(&tOwn, inSession(own, "true"))
		timed(&cBare, func() { bare(commit) })
		timed(&cSess, inSession(session, commit))
		timed(&cOwn, inSession(own, commit))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(tBare), "ms-bare")
	b.ReportMetric(float64(tSess)/float64(tBare), "x-session")
	b.ReportMetric(float64(tOwn)/float64(tBare), "x-per-command")
	b.ReportMetric(ms(cBare), "ms-commit-bare")
	b.ReportMetric(float64(cSess)/float64(cBare), "x-commit-session")
	b.ReportMetric(float64(cOwn)/float64(cBare), "x-commit-per-command")
}

// BenchmarkGitShadowSync is the git shadow's own share of a command that
// leaves git alone: Before and After on a repository with 200 branches
// and tags, without running anything (µs per command).
func BenchmarkGitShadowSync(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := filepath.Join(b.TempDir(), "proj")
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	script := "git init -q && git -c user.email=b@e -c user.name=B commit -q --allow-empty -m first && for i in $(seq 100); do git branch b$i; git tag t$i; done"
	os.MkdirAll(dir, 0o755)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir, cmd.Env = dir, gitEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: dir, Home: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	gs, err := gitshadow.Open(p, filepath.Join(b.TempDir(), "tmp"))
	if err != nil {
		b.Fatal(err)
	}
	defer gs.Close()
	ctx := context.Background()
	gs.After(ctx, gs.Before())
	for b.Loop() {
		gs.After(ctx, gs.Before())
	}
}
