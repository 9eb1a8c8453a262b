package sandbox

import (
	"context"
	"testing"
	"time"
)

// BenchmarkOverhead measures per-command overhead: `true` sandboxed against
// `true` through the same runner without walls (none), reported as a ratio
// from one run.
func BenchmarkOverhead(b *testing.B) {
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		b.Run(backend, func(b *testing.B) {
			none, _ := openBench(b, BackendNone)
			walled, _ := openBench(b, backend)
			ctx := context.Background()
			var plain, sandboxed time.Duration
			for b.Loop() {
				start := time.Now()
				if r, err := none.Run(ctx, Cmd{Script: "true"}); err != nil || r.ExitCode != 0 {
					b.Fatal(err)
				}
				plain += time.Since(start)
				start = time.Now()
				if r, err := walled.Run(ctx, Cmd{Script: "true"}); err != nil || r.ExitCode != 0 {
					b.Fatalf("%v %v", err, r)
				}
				sandboxed += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(plain.Microseconds())/n/1000, "ms-none")
			b.ReportMetric(float64(sandboxed.Microseconds())/n/1000, "ms-"+backend)
			b.ReportMetric(float64(sandboxed)/float64(plain), "ratio")
		})
	}
}

func openBench(b *testing.B, backend string) (Sandbox, string) {
	b.Helper()
	p, err := NewPolicy(PolicyOptions{Project: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	sb, err := Open(context.Background(), p, backend)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb, p.Project
}
