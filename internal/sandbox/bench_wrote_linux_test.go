package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkWriteHeavy measures a write-heavy command, 1,000 files created
// by one shell, through each backend's launcher (where the supervisor
// sees every creation: linux/inner/wrote_linux.go) and without walls.
func BenchmarkWriteHeavy(b *testing.B) {
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		b.Run(backend, func(b *testing.B) {
			none := openBench(b, BackendNone)
			launched := openBench(b, backend, WithLauncher(true))
			ctx := context.Background()
			var plain, viaLauncher time.Duration
			n := 0
			run := func(sb Sandbox, total *time.Duration) {
				n++
				script := fmt.Sprintf(`mkdir w%d && cd w%d && i=0; while [ $i -lt 1000 ]; do : > $i; i=$((i+1)); done`, n, n)
				start := time.Now()
				if r, err := sb.Run(ctx, Cmd{Script: script}); err != nil || r.ExitCode != 0 {
					b.Fatalf("%v %+v", err, r)
				}
				*total += time.Since(start)
			}
			for b.Loop() {
				run(none, &plain)
				run(launched, &viaLauncher)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
			b.ReportMetric(ms(plain), "ms-none")
			b.ReportMetric(ms(viaLauncher), "ms-launcher")
			b.ReportMetric(float64(viaLauncher)/float64(plain), "x-launcher")
		})
	}
}
