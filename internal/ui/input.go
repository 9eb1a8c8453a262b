package ui

import (
	"context"
	"io"
	"os"
	"sync"
)

// Input is the single reader of the terminal's input. The line editor and
// the permission prompt both read through it, so no goroutine is ever left
// blocked on stdin holding keystrokes meant for someone else: a read that
// its caller abandoned (context cancelled) leaves its bytes here for the
// next reader.
type Input struct {
	r    io.Reader
	once sync.Once
	ch   chan []byte
	err  error // set before ch is closed

	mu  sync.Mutex
	buf []byte
}

// NewInput wraps r; nothing is read until the first Next.
func NewInput(r io.Reader) *Input {
	return &Input{r: r, ch: make(chan []byte, 16)}
}

// File returns the underlying file when it is one, for terminal modes.
func (in *Input) File() (*os.File, bool) {
	f, ok := in.r.(*os.File)
	return f, ok
}

func (in *Input) start() {
	in.once.Do(func() {
		go func() {
			p := make([]byte, 4096)
			for {
				n, err := in.r.Read(p)
				if n > 0 {
					in.ch <- append([]byte(nil), p[:n]...)
				}
				if err != nil {
					in.err = err
					close(in.ch)
					return
				}
			}
		}()
	})
}

// Next returns the next byte, or ctx's error when ctx ends first, or
// the reader's error (io.EOF) once the input is exhausted.
func (in *Input) Next(ctx context.Context) (byte, error) {
	in.mu.Lock()
	if len(in.buf) > 0 {
		b := in.buf[0]
		in.buf = in.buf[1:]
		in.mu.Unlock()
		return b, nil
	}
	in.mu.Unlock()
	in.start()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case p, ok := <-in.ch:
		if !ok {
			return 0, in.err
		}
		in.mu.Lock()
		in.buf = append(in.buf, p[1:]...)
		in.mu.Unlock()
		return p[0], nil
	}
}

// Buffered reports whether a byte is available without blocking; the
// editor uses it to tell a typed Escape from the start of a sequence and
// to batch redraws while a paste streams in.
func (in *Input) Buffered() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.buf) > 0 {
		return true
	}
	select {
	case p, ok := <-in.ch:
		if ok {
			in.buf = append(in.buf, p...)
			return len(p) > 0
		}
		// Closed: put the closed state back by leaving buf empty; the next
		// ReadByte sees the closed channel again.
		return false
	default:
		return false
	}
}
