package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestProviderAnswerBounded: a provider whose answer never ends (one
// endless line, one endless event of many lines, an endless JSON body, an
// endless stream of valid events) fails the request with an error that
// names the limit, not retried, and harness stops reading there: its heap
// stays bounded and the server sees it hang up.
func TestProviderAnswerBounded(t *testing.T) {
	testenv.Slow(t)
	chunk := strings.Repeat("x", 64<<10)
	for _, c := range []struct {
		name, ctype, head, repeat, want string
		bound                           uint64
	}{
		{"line", "text/event-stream", "event: content_block_delta\ndata: ", chunk, "an event-stream line over 16 MiB, the limit harness reads from a provider", 64 << 20},
		{"event", "text/event-stream", "event: content_block_delta\n", "data: " + chunk + "\n", "an event-stream event over 16 MiB, the limit harness reads from a provider", 64 << 20},
		{"json", "application/json", `{"type":"message","content":[{"type":"text","text":"`, chunk, "a JSON answer over 16 MiB, the limit harness reads from a provider", 64 << 20},
		{"stream", "text/event-stream",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + chunk + "\"}}\n\n",
			"a stream over 128 MiB, the limit harness reads from a provider", 448 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", c.ctype)
				io.WriteString(w, c.head)
				for sent.Load() < 1<<30 { // a client that never stops reading fails the test, not the machine
					n, err := io.WriteString(w, c.repeat)
					if err != nil {
						return
					}
					sent.Add(int64(n))
				}
			}))
			defer srv.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			began := time.Now()
			_, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"}).Stream(context.Background(), conversation(0, 0), nil)
			runtime.ReadMemStats(&after)
			t.Logf("%s; %d MiB sent; %d MiB allocated", time.Since(began).Round(time.Millisecond), sent.Load()>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
			var e *llm.Error
			if !errors.As(err, &e) || e.Retryable() || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a non-retryable error saying %q", err, c.want)
			}
			if sent.Load() >= 1<<30 {
				t.Errorf("harness read the whole GiB the server sent")
			}
			if got := after.HeapInuse; got > before.HeapInuse+c.bound {
				t.Errorf("the heap grew by %d MiB (bound %d MiB)", (got-before.HeapInuse)>>20, c.bound>>20)
			}
		})
	}
}
