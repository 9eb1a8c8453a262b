package doors

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/sandbox"
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
			sb, err := sandbox.Open(ctx, w.pol, w.backend, w.opts...)
			if err != nil {
				return "", "no sandbox: " + err.Error()
			}
			defer sb.Close()
			// A server that answers the first request with one line of
			// 256 MiB: harness must fail it naming the limit, holding
			// none of it.
			def := mcp.Server{Name: "huge", Command: "sh", Args: []string{"-c",
				`read -r _; printf '{"jsonrpc":"2.0","id":1,"result":{"x":"'; head -c 268435456 /dev/zero | tr '\0' a; printf '"}}\n'; sleep 5`}}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			m, errs := mcp.Start(ctx, []mcp.Server{def}, mcp.Options{Sandbox: sb, StartTimeout: 60 * time.Second})
			if m != nil {
				defer m.Close()
			}
			runtime.ReadMemStats(&after)
			grew := int64(after.TotalAlloc-before.TotalAlloc) >> 20
			note := fmt.Sprintf("%d MiB allocated, %s", grew, time.Since(start).Round(100*time.Millisecond))
			switch {
			case len(errs) == 0:
				return "a 256 MiB answer was accepted", note
			case !strings.Contains(errs[0].Error(), "MiB"):
				return "the error does not name the limit: " + errs[0].Error(), note
			case grew > 128:
				return "reading it allocated " + fmt.Sprint(grew) + " MiB", note
			}
			return "", note
		},
	})
}
