package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// BenchmarkOverhead measures per-command overhead: `true` through the same
// runner without walls (none), and under each backend both with the
// session's launcher and with a fresh sandbox per command, interleaved in
// one loop so that one run gives comparable ratios (x-<variant> is that
// variant's time over none's).
func BenchmarkOverhead(b *testing.B) {
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		b.Run(backend, func(b *testing.B) {
			none := openBench(b, BackendNone)
			launched := openBench(b, backend, WithLauncher(true))
			own := openBench(b, backend, WithLauncher(false))
			ctx := context.Background()
			var plain, viaLauncher, perCommand time.Duration
			run := func(sb Sandbox, total *time.Duration) {
				start := time.Now()
				if r, err := sb.Run(ctx, Cmd{Script: "true"}); err != nil || r.ExitCode != 0 {
					b.Fatalf("%v %+v", err, r)
				}
				*total += time.Since(start)
			}
			for b.Loop() {
				run(none, &plain)
				run(launched, &viaLauncher)
				run(own, &perCommand)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
			b.ReportMetric(ms(plain), "ms-none")
			b.ReportMetric(ms(viaLauncher), "ms-launcher")
			b.ReportMetric(ms(perCommand), "ms-per-command")
			b.ReportMetric(float64(viaLauncher)/float64(plain), "x-launcher")
			b.ReportMetric(float64(perCommand)/float64(plain), "x-per-command")
		})
	}
}

func openBench(b *testing.B, backend string, opts ...Option) Sandbox {
	b.Helper()
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: b.TempDir()})
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

// BenchmarkFileTools measures the file tools' descriptor-based I/O against
// plain os calls on the same small file: ns per read or write.
func BenchmarkFileTools(b *testing.B) {
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	path := p.Project() + "/src/file.go"
	data := []byte("package main\n\nfunc main() {}\n")
	live := walls.NewLive(p)
	if _, err := live.WriteFile(path, data); err != nil {
		b.Fatal(err)
	}
	b.Run("read-policy", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := p.ReadFile(path, 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-os", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write-policy", func(b *testing.B) {
		for b.Loop() {
			if _, err := live.WriteFile(path, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write-os", func(b *testing.B) {
		for b.Loop() {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}
