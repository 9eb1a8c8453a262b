package mcp

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// heapWatch samples the heap while a test runs: the peak growth over the
// start, and the bytes allocated in all. Past abortAt it calls abort, so
// a client that buffers without bound fails the test instead of the
// machine.
type heapWatch struct {
	start      runtime.MemStats
	peak       atomic.Uint64
	stop, done chan struct{}
}

func watchHeap(abortAt uint64, abort func()) *heapWatch {
	w := &heapWatch{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.GC()
	runtime.ReadMemStats(&w.start)
	go func() {
		defer close(w.done)
		var once sync.Once
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > w.start.HeapInuse && m.HeapInuse-w.start.HeapInuse > w.peak.Load() {
				w.peak.Store(m.HeapInuse - w.start.HeapInuse)
			}
			if w.peak.Load() > abortAt {
				once.Do(abort)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return w
}

// end returns the peak heap growth and the bytes allocated since the start.
func (w *heapWatch) end() (peak, allocated uint64) {
	close(w.stop)
	<-w.done
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return w.peak.Load(), m.TotalAlloc - w.start.TotalAlloc
}

// TestServerHugeLineBounded: a stdio server that answers with one valid
// line of 256 MiB, or with a line that never ends, does not make harness
// buffer it: the call fails at once with an error naming the limit,
// harness's heap grows by a fraction of the line, the SDK ends that
// server's session (it is stopped, and says why), and the other servers
// go on.
func TestServerHugeLineBounded(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range []string{sandbox.BackendNone, sandbox.BackendBwrap} {
		t.Run(backend, func(t *testing.T) {
			if backend == sandbox.BackendBwrap {
				needBwrap(t)
			}
			f := newFixture(t)
			sb := f.open(t, backend)
			m := start(t, sb, Options{CallTimeout: 60 * time.Second}, f.goServer("huge", mcptest.HugeKind), f.goServer("endless", mcptest.HugeKind))
			ts := m.Tools(false)
			const line = 256 << 20
			// The heap in use stays within six times the limit (the SDK's
			// json.Decoder grows its buffer by doubling up to the limit,
			// and copies it as it grows), and what is allocated within
			// three quarters of the line (86 MiB measured, 152 MiB under
			// the race detector, whose sync.Pool keeps nothing): a
			// buffered line would take all of it and more.
			const bound, allocBound = 96 << 20, line * 3 / 4
			for _, tool := range []string{"mcp__huge__huge", "mcp__endless__endless"} {
				w := watchHeap(1<<30, m.Close)
				began := time.Now()
				res := run(t, ts, tool, fmt.Sprintf(`{"n":%d}`, line))
				took := time.Since(began)
				peak, allocated := w.end()
				t.Logf("%s: %s; heap peak +%d MiB, %d MiB allocated", tool, took.Round(time.Millisecond), peak>>20, allocated>>20)
				server := strings.Split(tool, "__")[1]
				want := "MCP server " + server + " stopped: it sent a message over 16 MiB, the limit for one MCP message"
				if !res.IsError || !strings.Contains(res.Content, want) {
					t.Errorf("%s: the answer was not refused with the limit's error: %.300s", tool, res.Content)
				}
				if peak > bound || allocated > allocBound {
					t.Errorf("%s: harness's heap grew by %d MiB at its peak and %d MiB were allocated, for a line of %d MiB; the bounds are %d and %d MiB", tool, peak>>20, allocated>>20, line>>20, bound>>20, allocBound>>20)
				}
				if took > 30*time.Second {
					t.Errorf("%s: the call took %s to fail", tool, took)
				}
			}
			// The server that sent it is stopped, and says why.
			if res := run(t, ts, "mcp__huge__echo", `{"text":"after"}`); !res.IsError || !strings.Contains(res.Content, "over 16 MiB") {
				t.Errorf("a call to the server after its long line: %+v", res)
			}
		})
	}
}
