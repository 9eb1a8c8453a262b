package sandbox

import "sync"

// boundedBuffer keeps the first limit bytes written to it and counts the
// rest, so a command like `yes` cannot grow the harness's memory.
type boundedBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - len(b.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (b *boundedBuffer) result() ([]byte, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf, b.dropped
}
