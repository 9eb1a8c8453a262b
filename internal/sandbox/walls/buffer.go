package walls

import (
	"fmt"
	"sync"
)

// BoundedBuffer keeps at most limit bytes of what is written to it: the
// first half and the last half, and counts what fell between, so a
// command like `yes` cannot grow the harness's memory and the end of a
// long output (where a build or a test run prints its failures) is kept.
type BoundedBuffer struct {
	mu      sync.Mutex
	Limit   int
	head    []byte // the first limit - limit/2 bytes
	tail    []byte // ring of the last limit/2 bytes once head is full
	start   int    // where the oldest byte of a full tail is
	dropped int
}

func (b *BoundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	headCap := b.Limit - b.Limit/2
	if room := headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	tailCap := b.Limit / 2
	if len(p) == 0 {
		return n, nil
	}
	if tailCap == 0 {
		b.dropped += len(p)
		return n, nil
	}
	if len(p) >= tailCap {
		// Everything in the tail and the front of p falls out.
		b.dropped += len(b.tail) + len(p) - tailCap
		b.tail = append(b.tail[:0], p[len(p)-tailCap:]...)
		b.start = 0
		return n, nil
	}
	if room := tailCap - len(b.tail); room > 0 {
		k := min(room, len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
	}
	// The tail is full: overwrite its oldest bytes.
	for len(p) > 0 {
		k := copy(b.tail[b.start:], p)
		b.dropped += k
		p = p[k:]
		b.start = (b.start + k) % tailCap
	}
	return n, nil
}

// Result returns what was kept, head then tail, with a line marking where
// bytes were dropped, and how many were.
func (b *BoundedBuffer) Result() ([]byte, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]byte(nil), b.head...)
	if b.dropped > 0 {
		out = fmt.Appendf(out, "\n[harness: %d bytes of output dropped here; the start and the end are kept]\n", b.dropped)
	}
	out = append(out, b.tail[b.start:]...)
	out = append(out, b.tail[:b.start]...)
	return out, b.dropped
}
