package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestBackgroundEndlessOutputBounded: a background command that prints
// without end keeps harness's heap bounded (no allocation per write once
// the kept output is full), and bash_output returns the latest 1 MiB with
// a note naming how much was dropped and the limit.
func TestBackgroundEndlessOutputBounded(t *testing.T) {
	testenv.Slow(t)
	env, _ := newEnv(t)
	jobs := &Jobs{Sandbox: env.Sandbox}
	t.Cleanup(jobs.Close)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id, err := jobs.Start("yes harness-background-output", false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	raw, _ := json.Marshal(map[string]any{"id": id})
	res := (&BashOutput{Jobs: jobs}).Run(context.Background(), raw)
	runtime.ReadMemStats(&after)
	if _, err := jobs.Stop(id); err != nil {
		t.Fatal(err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	jobs.mu.Lock()
	total := jobs.jobs[id].total
	jobs.mu.Unlock()
	t.Logf("%d MiB printed in 2 s; %d MiB allocated; %d KiB returned", total>>20, allocated>>20, len(res.Content)>>10)
	if allocated > 16<<20 {
		t.Errorf("%d MiB of endless output allocated %d MiB in harness", total>>20, allocated>>20)
	}
	if !strings.Contains(res.Content, "bytes of output were not kept: harness keeps the latest 1 MiB of a background command's output; they follow]") {
		t.Errorf("bash_output does not say what was dropped and the limit: %.200q", res.Content)
	}
	if len(res.Content) > 1<<20+512 {
		t.Errorf("bash_output returned %d bytes, over the 1 MiB kept", len(res.Content))
	}
}

// TestWebFetchEndlessBodyBounded: a site whose body never ends is read up
// to the limit, within a bounded heap; the result says the body was cut
// at the limit, and names it.
func TestWebFetchEndlessBodyBounded(t *testing.T) {
	testenv.Slow(t)
	for _, ctype := range []string{"text/plain", "text/html"} {
		t.Run(ctype, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ctype)
				line := []byte(strings.Repeat("<p>endless page</p>\n", 1000))
				for {
					if _, err := w.Write(line); err != nil {
						return
					}
				}
			}))
			defer srv.Close()
			n := &fetchNet{names: map[string]string{"endless.example.com": "93.184.215.14"}, target: srv.Listener.Addr().String()}
			w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n, "endless.example.com"))}
			watch := startHeapWatch()
			res := fetch(t, w, "http://endless.example.com/")
			peak, allocated := watch.end()
			t.Logf("heap peak +%d MiB, %d MiB allocated, %d KiB returned", peak>>20, allocated>>20, len(res.Content)>>10)
			if !strings.Contains(res.Content, "[the body is larger than 10 MiB, the limit web_fetch reads; only the first 10 MiB were read]") {
				t.Errorf("the result does not say the body was cut at the limit: %.300q", res.Content)
			}
			if ctype == "text/html" && !strings.Contains(res.Content, "[the page is larger than 2 MiB, the most web_fetch converts to Markdown") {
				t.Errorf("the result does not say the page was converted in part: %.300q", res.Content)
			}
			if peak > 128<<20 {
				t.Errorf("an endless body grew the heap by %d MiB", peak>>20)
			}
		})
	}
}

// heapWatch samples the heap's growth while a test runs.
type heapWatch struct {
	start      runtime.MemStats
	peak       atomic.Uint64
	stop, done chan struct{}
}

func startHeapWatch() *heapWatch {
	w := &heapWatch{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.GC()
	runtime.ReadMemStats(&w.start)
	go func() {
		defer close(w.done)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > w.start.HeapInuse && m.HeapInuse-w.start.HeapInuse > w.peak.Load() {
				w.peak.Store(m.HeapInuse - w.start.HeapInuse)
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
