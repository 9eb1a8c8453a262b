package sandbox

import (
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// Test helpers shared with netproxy's own tests (a copy: test files do not
// cross packages).

type records struct {
	mu  sync.Mutex
	all []netproxy.ConnRecord
}

func (r *records) add(c netproxy.ConnRecord) { r.mu.Lock(); r.all = append(r.all, c); r.mu.Unlock() }

// count is how many connections were recorded so far: a mark for await.
func (r *records) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.all) }

// await returns the first record from the from-th on that satisfies ok
// (nil: any), waiting for it: Serve records a connection once it is
// over, which may be after the client saw its end. It fails the test
// when none comes.
func (r *records) await(t *testing.T, from int, ok func(netproxy.ConnRecord) bool) netproxy.ConnRecord {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r.mu.Lock()
		for _, c := range r.all[min(from, len(r.all)):] {
			if ok == nil || ok(c) {
				r.mu.Unlock()
				return c
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no connection recorded (from the %d-th on) as awaited", from)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
