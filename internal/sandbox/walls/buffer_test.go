package walls

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBoundedBufferKeepsHeadAndTail: whatever the write sizes, the buffer
// keeps exactly the first and the last half of the limit, counts the rest,
// and marks the cut; the error summary at the end of a long build log
// survives. Checked against a plain buffer for random write patterns.
func TestBoundedBufferKeepsHeadAndTail(t *testing.T) {
	for _, limit := range []int{0, 1, 2, 7, 64, 1000} {
		for seed := range uint64(50) {
			r := rand.New(rand.NewPCG(seed, uint64(limit)))
			b := &BoundedBuffer{Limit: limit}
			var all bytes.Buffer
			for range r.IntN(40) {
				p := make([]byte, r.IntN(3*limit+5))
				for i := range p {
					p[i] = byte('a' + r.IntN(26))
				}
				if n, err := b.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				all.Write(p)
			}
			got, dropped := b.Result()
			whole := all.Bytes()
			if len(whole) <= limit {
				if dropped != 0 || !bytes.Equal(got, whole) {
					t.Fatalf("limit %d seed %d: under the limit, got %q (dropped %d), want %q", limit, seed, got, dropped, whole)
				}
				continue
			}
			head, tail := limit-limit/2, limit/2
			marker := fmt.Sprintf("\n[harness: %d bytes of output dropped here; the start and the end are kept]\n", len(whole)-limit)
			want := string(whole[:head]) + marker + string(whole[len(whole)-tail:])
			if dropped != len(whole)-limit || string(got) != want {
				t.Fatalf("limit %d seed %d: got %q (dropped %d), want %q (dropped %d)", limit, seed, got, dropped, want, len(whole)-limit)
			}
		}
	}
}

// TestBoundedBufferFailureSummary: a megabyte of build noise and then the
// failure: the failure is what the model gets to read.
func TestBoundedBufferFailureSummary(t *testing.T) {
	b := &BoundedBuffer{Limit: 4096}
	for range 20000 {
		b.Write([]byte("compiling something mildly interesting\n"))
	}
	b.Write([]byte("--- FAIL: TestTheThing (0.01s)\nFAIL\n"))
	got, dropped := b.Result()
	if !strings.HasSuffix(string(got), "--- FAIL: TestTheThing (0.01s)\nFAIL\n") || dropped == 0 || len(got) > 4096+200 {
		t.Fatalf("kept %d bytes, dropped %d, ending %q", len(got), dropped, got[max(0, len(got)-80):])
	}
}
