package doors

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func init() {
	register(probe{
		name: "mcp: a 256 MiB line from a server",
		live: true,
		absent: func(b string) string {
			if sandbox.IsContainer(b) {
				return "no door here: a container backend runs no stdio MCP server (it gives commands no standard input)"
			}
			return ""
		},
		run: func(ctx context.Context, w *world) (string, string) {
			sb, err := sandbox.Open(ctx, walls.NewLive(w.pol), w.backend, w.opts...)
			if err != nil {
				return "", "no sandbox: " + err.Error()
			}
			defer sb.Close()
			// A server that answers the first request with one line of
			// 256 MiB: harness must fail it naming the limit, holding
			// none of it.
			def := mcp.Server{Name: "huge", Command: "sh", Args: []string{"-c",
				`read -r _; printf '{"jsonrpc":"2.0","id":1,"result":{"x":"'; head -c 268435456 /dev/zero | tr '\0' a; printf '"}}\n'; sleep 5`}}
			// What counts is the memory held: the heap in use at its
			// peak, sampled while the answer is read, within six times
			// the 16 MiB limit (the SDK's decoder doubles its buffer up
			// to it); and what is allocated, within three quarters of the
			// line (the race detector's build allocates about twice what
			// a release does). A buffered line would take all of it.
			const line = 256 << 20
			const heapBound, allocBound = 96 << 20, line * 3 / 4
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var peak atomic.Uint64
			stop, sampled := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if m.HeapInuse > before.HeapInuse && m.HeapInuse-before.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse - before.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			m, errs := mcp.Start(ctx, []mcp.Server{def}, mcp.Options{Sandbox: sb, StartTimeout: 60 * time.Second})
			if m != nil {
				defer m.Close()
			}
			close(stop)
			<-sampled
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			note := fmt.Sprintf("heap peak +%d MiB, %d MiB allocated, %s", peak.Load()>>20, allocated>>20, time.Since(start).Round(100*time.Millisecond))
			switch {
			case len(errs) == 0:
				return "a 256 MiB answer was accepted", note
			case !strings.Contains(errs[0].Error(), "MiB"):
				return "the error does not name the limit: " + errs[0].Error(), note
			case peak.Load() > heapBound:
				return fmt.Sprintf("reading it held %d MiB of heap", peak.Load()>>20), note
			case allocated > allocBound:
				return fmt.Sprintf("reading it allocated %d MiB", allocated>>20), note
			}
			return "", note
		},
	})
}
