package ui

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
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

	resized chan struct{} // Resized was called; NextKey reports it
	poked   chan struct{} // Poke was called; NextKey reports it
}

// NewInput wraps r; nothing is read until the first Next.
func NewInput(r io.Reader) *Input {
	return &Input{r: r, ch: make(chan []byte, 16), resized: make(chan struct{}, 1), poked: make(chan struct{}, 1)}
}

// IsTerminal reports whether the input is a terminal.
func (in *Input) IsTerminal() bool {
	f, ok := in.File()
	return ok && term.IsTerminal(int(f.Fd()))
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
	return in.next(ctx, nil, nil)
}

// ErrResized is returned by NextKey when the terminal was resized: the
// editor redraws for the new size, then reads on.
var ErrResized = errors.New("terminal resized")

// Resized tells a reader waiting in NextKey that the terminal changed
// size (the front end calls it on SIGWINCH). Only one is kept.
func (in *Input) Resized() {
	select {
	case in.resized <- struct{}{}:
	default:
	}
}

// ErrPoked is returned by NextKey after Poke: the front end has news to
// show, or a question to ask, while a line is edited (a server that
// started beside the prompt); the editor steps aside for it.
var ErrPoked = errors.New("poked")

// Poke tells a reader waiting in NextKey that the front end wants the
// screen for a moment. Only one is kept; a reader that never calls
// NextKey never sees it.
func (in *Input) Poke() {
	select {
	case in.poked <- struct{}{}:
	default:
	}
}

// NextKey is Next that also returns ErrResized after Resized and
// ErrPoked after Poke.
func (in *Input) NextKey(ctx context.Context) (byte, error) {
	return in.next(ctx, in.resized, in.poked)
}

// next is Next, also ending with ErrResized when resized (nil: never)
// delivers, and ErrPoked when poked does.
func (in *Input) next(ctx context.Context, resized, poked <-chan struct{}) (byte, error) {
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
	case <-resized:
		return 0, ErrResized
	case <-poked:
		return 0, ErrPoked
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

// Unread puts p back in front of what is still to be read: keys typed
// during a turn, read to watch for Esc, go back to the next prompt.
func (in *Input) Unread(p []byte) {
	if len(p) == 0 {
		return
	}
	in.mu.Lock()
	in.buf = append(append([]byte(nil), p...), in.buf...)
	in.mu.Unlock()
}

// Wait returns true when a byte arrives within d (it stays to be read),
// false when none does or ctx ends.
func (in *Input) Wait(ctx context.Context, d time.Duration) bool {
	if in.Buffered() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	b, err := in.Next(ctx)
	if err != nil {
		return false
	}
	in.Unread([]byte{b})
	return true
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
