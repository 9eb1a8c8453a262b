package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestWebFetchLoopbackEndlessBody: web_fetch of a dev server inside the
// walls whose body never ends returns once the limit is read (curl is
// stopped there, not at the fetch's timeout), says the body was cut at the
// limit, and keeps harness's heap bounded.
func TestWebFetchLoopbackEndlessBody(t *testing.T) {
	testenv.Slow(t)
	sb, _, bin := bgSandbox(t)
	jobs := &Jobs{Sandbox: sb}
	t.Cleanup(jobs.Close)
	proxy := netproxy.Proxy{Decide: func(context.Context, string, int) netproxy.ConnVerdict { return netproxy.ConnVerdict{Reason: "no"} }}
	env := &Env{Sandbox: sb, Jobs: jobs}
	r := NewRegistry(GateFunc(func(context.Context, Access) (bool, string) { return true, "" }),
		append(Builtins(env), &WebFetch{Proxy: &proxy, Sandbox: sb})...)
	port := 19000 + rand.IntN(1000)
	marker := fmt.Sprintf("devserver-%d", rand.IntN(1e9))
	if b := runTool(t, r, "bash", map[string]any{"command": serverScript(bin, marker, port), "background": true}); b.IsError {
		t.Fatalf("start: %+v", b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for runTool(t, r, "web_fetch", map[string]any{"url": fmt.Sprintf("http://localhost:%d/page", port)}).IsError {
		if time.Now().After(deadline) {
			t.Fatal("the dev server never answered")
		}
		time.Sleep(200 * time.Millisecond)
	}
	watch := startHeapWatch()
	began := time.Now()
	b := runTool(t, r, "web_fetch", map[string]any{"url": fmt.Sprintf("http://localhost:%d/endless", port), "timeout": 60})
	took := time.Since(began)
	peak, allocated := watch.end()
	t.Logf("%s; heap peak +%d MiB, %d MiB allocated", took.Round(time.Millisecond), peak>>20, allocated>>20)
	if !strings.Contains(b.Content, "[the body is larger than 10 MiB, the limit web_fetch reads; only the first 10 MiB were read]") {
		t.Errorf("the result does not say the body was cut at the limit: %.300q", b.Content)
	}
	if took > 30*time.Second {
		t.Errorf("web_fetch of an endless body took %s: curl ran on to the timeout", took)
	}
	if peak > 96<<20 {
		t.Errorf("an endless body grew the heap by %d MiB", peak>>20)
	}
}
