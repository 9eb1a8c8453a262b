package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
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
// harness's heap grows by a fraction of the line, and the server's next
// answer is read as usual.
func TestServerHugeLineBounded(t *testing.T) {
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
			// The heap in use stays within four times the limit, and what
			// is allocated within half the line (the race detector's
			// build, whose sync.Pool keeps nothing, allocates 2-3 times
			// more for the same reads): a buffered line would take all
			// of it and more.
			const bound, allocBound = 64 << 20, line / 2
			for _, tool := range []string{"mcp__huge__huge", "mcp__endless__endless"} {
				w := watchHeap(1<<30, m.Close)
				began := time.Now()
				res := run(t, ts, tool, fmt.Sprintf(`{"n":%d}`, line))
				took := time.Since(began)
				peak, allocated := w.end()
				t.Logf("%s: %s; heap peak +%d MiB, %d MiB allocated", tool, took.Round(time.Millisecond), peak>>20, allocated>>20)
				server := strings.Split(tool, "__")[1]
				want := "MCP server " + server + " sent a message over 16 MiB, the limit for one MCP message; it was discarded unread"
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
			// The line was discarded and the session goes on.
			if res := run(t, ts, "mcp__huge__echo", `{"text":"after"}`); res.IsError || res.Content != "echo: after" {
				t.Errorf("the server's next answer after the long line: %+v", res)
			}
		})
	}
}

// endless is a reader of x's that never ends, counting what was read.
type endless struct{ n atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// TestLineConnOverLimit: a line over the limit is an error as soon as it
// goes over (a line that never ends does not keep read waiting); the rest
// is discarded without being held, and the next line is read whole.
func TestLineConnOverLimit(t *testing.T) {
	pr, pw := io.Pipe()
	c := newLineConn(pr, nopWriteCloser{io.Discard})
	go func() {
		io.CopyN(pw, &endless{}, 100<<20) // 100 MiB of one line
		io.WriteString(pw, "tail of the long line\n{\"jsonrpc\":\"2.0\",\"method\":\"next\"}\n")
		pw.Close()
	}()
	w := watchHeap(1<<30, func() { pr.CloseWithError(errors.New("the reader buffered without bound")) })
	_, err := c.read()
	if !isTooLarge(err) || !strings.Contains(err.Error(), "16 MiB") {
		t.Fatalf("read of a long line: %v", err)
	}
	msg, err := c.read()
	peak, allocated := w.end()
	if err != nil || !strings.Contains(string(msg), `"next"`) {
		t.Fatalf("the line after the long one: %q, %v", msg, err)
	}
	t.Logf("heap peak +%d MiB, %d MiB allocated for a line of 100 MiB", peak>>20, allocated>>20)
	if peak > 48<<20 || allocated > 48<<20 {
		t.Errorf("a 100 MiB line made the heap grow by %d MiB (%d MiB allocated)", peak>>20, allocated>>20)
	}

	// A line that never ends: the error comes after the limit, not never.
	pr2, pw2 := io.Pipe()
	c = newLineConn(pr2, nopWriteCloser{io.Discard})
	src := &endless{}
	go io.Copy(pw2, src)
	defer pr2.Close()
	done := make(chan error, 1)
	go func() { _, err := c.read(); done <- err }()
	select {
	case err := <-done:
		if !isTooLarge(err) {
			t.Fatalf("an endless line: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("read still waits for the end of an endless line after %d MiB", src.n.Load()>>20)
	}
	// Discarding it is bounded too: past maxDiscard the session ends.
	defer func(d int64) { maxDiscard = d }(maxDiscard)
	maxDiscard = 64 << 20
	go func() { _, err := c.read(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, errClosed) || !strings.Contains(err.Error(), "harness stopped reading it") {
			t.Fatalf("discarding an endless line: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still discarding an endless line after %d MiB", src.n.Load()>>20)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestSSEReaderOverLimit: an event-stream line, or an event of many data
// lines, over the limit is an error as soon as it goes over; the rest of
// the event is discarded and the next event is read.
func TestSSEReaderOverLimit(t *testing.T) {
	var lines []io.Reader
	for range 200 {
		lines = append(lines, strings.NewReader("data: "), io.LimitReader(&endless{}, 1<<20), strings.NewReader("\n"))
	}
	for name, ev := range map[string]io.Reader{
		"one line":   io.MultiReader(strings.NewReader("data: "), io.LimitReader(&endless{}, 200<<20), strings.NewReader("\n\n")),
		"many lines": io.MultiReader(append(lines, strings.NewReader("\n"))...),
	} {
		t.Run(name, func(t *testing.T) {
			w := watchHeap(1<<30, func() {})
			s := newSSEReader(io.MultiReader(ev, strings.NewReader("event: message\ndata: next\n\n")))
			_, err := s.next()
			if !isTooLarge(err) || !strings.Contains(err.Error(), "over 16 MiB") {
				t.Fatalf("an event over the limit: %v", err)
			}
			next, err := s.next()
			peak, _ := w.end()
			if err != nil || next.Data != "next" {
				t.Fatalf("the event after: %+v %v", next, err)
			}
			if peak > 64<<20 {
				t.Errorf("the heap grew by %d MiB for a 200 MiB event", peak>>20)
			}
		})
	}
}

// TestHTTPAnswerOverLimit: a streamable HTTP server whose JSON answer
// never ends fails the call with the limit's error, with the heap bounded;
// one whose event stream carries an event over the limit fails the calls
// in flight, and the stream's next message still arrives.
func TestHTTPAnswerOverLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			io.Copy(w, io.LimitReader(&endless{}, 40<<20))
			io.WriteString(w, "\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`)
		io.Copy(w, &endless{}) // until the client hangs up
	}))
	defer srv.Close()
	ctx := context.Background()

	w := watchHeap(1<<30, srv.CloseClientConnections)
	c := newStreamable(ctx, srv.URL, srv.Client(), nil)
	defer c.close()
	err := c.write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	peak, allocated := w.end()
	if !isTooLarge(err) || !strings.Contains(err.Error(), "an HTTP answer over 16 MiB, the limit for one MCP message") {
		t.Fatalf("an endless JSON answer: %v", err)
	}
	t.Logf("endless JSON answer: heap peak +%d MiB, %d MiB allocated", peak>>20, allocated>>20)
	// Within four times the limit in use, eight allocated (the race
	// detector's build allocates more for the same reads); an answer held
	// whole grows without end.
	if peak > 64<<20 || allocated > 128<<20 {
		t.Errorf("an endless JSON answer grew the heap by %d MiB (%d MiB allocated)", peak>>20, allocated>>20)
	}

	c2 := newStreamable(ctx, srv.URL+"/sse", srv.Client(), nil)
	defer c2.close()
	if err := c2.write(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.read(); !isTooLarge(err) {
		t.Fatalf("an event over the limit: %v", err)
	}
	if msg, err := c2.read(); err != nil || !strings.Contains(string(msg), `"result"`) {
		t.Fatalf("the message after it: %q %v", msg, err)
	}
}
