package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// BenchmarkOverheadGit is BenchmarkOverhead in a project that is a git
// repository, where each command also gets the git shadow: the data files
// synced in and out, the branch heads compared and (with append-only
// objects) the shadow's new objects imported. A command that commits is
// measured too, against the same commit unsandboxed.
//
//	go test -run '^$' -bench OverheadGit -benchtime 100x ./internal/sandbox/
func BenchmarkOverheadGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		b.Run(backend, func(b *testing.B) {
			open := func(backend string, opts ...Option) Sandbox {
				dir := b.TempDir()
				for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "b@example.com"}, {"config", "user.name", "B"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
					cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
					cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("git %v: %v %s", args, err, out)
					}
				}
				p, err := walls.NewPolicy(walls.PolicyOptions{Project: dir})
				if err != nil {
					b.Fatal(err)
				}
				sb, err := Open(context.Background(), walls.NewLive(p), backend, opts...)
				if err != nil {
					b.Skip(err)
				}
				b.Cleanup(func() { sb.Close() })
				return sb
			}
			none := open(BackendNone)
			launched := open(backend, WithLauncher(true))
			ctx := context.Background()
			var plain, viaLauncher, plainCommit, launcherCommit time.Duration
			run := func(sb Sandbox, script string, total *time.Duration) {
				start := time.Now()
				if r, err := sb.Run(ctx, Cmd{Script: script}); err != nil || r.ExitCode != 0 {
					b.Fatalf("%v %+v %s", err, r, r.Output)
				}
				*total += time.Since(start)
			}
			commit := "echo x >> f && git add f && git -c user.email=b@example.com -c user.name=B commit -q -m c"
			for b.Loop() {
				run(none, "true", &plain)
				run(launched, "true", &viaLauncher)
				run(none, commit, &plainCommit)
				run(launched, commit, &launcherCommit)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
			b.ReportMetric(ms(plain), "ms-none")
			b.ReportMetric(ms(viaLauncher), "ms-launcher")
			b.ReportMetric(float64(viaLauncher)/float64(plain), "x-launcher")
			b.ReportMetric(ms(plainCommit), "ms-commit-none")
			b.ReportMetric(ms(launcherCommit), "ms-commit-launcher")
			b.ReportMetric(float64(launcherCommit)/float64(plainCommit), "x-commit")
		})
	}
}
