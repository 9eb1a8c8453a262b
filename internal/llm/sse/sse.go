package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of the stream, and MaxEvent the data of one
// event (its data lines together), so a broken server cannot make the
// reader buffer without limit: past either, Next fails with an error that
// names the limit, and the stream is not read further.
const (
	MaxLine  = 16 << 20
	MaxEvent = 16 << 20
)

// TooLargeError is a line or an event over its limit.
type TooLargeError struct {
	What  string // "line", "event"
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("an event-stream %s over %d MiB, the limit for one %s", e.What, e.Limit>>20, e.What)
}

// Event is one dispatched event. Data is the data lines joined by "\n"; it
// is only valid until the next call to Next.
type Event struct {
	Name string
	Data []byte
}

// Reader reads events from an SSE stream.
type Reader struct {
	br      *bufio.Reader
	line    []byte // reused buffer for lines longer than br's buffer
	data    []byte
	name    string
	last    string // last event name seen, reused
	hasData bool
	err     error
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event. It returns io.EOF after the last event of a
// cleanly ended stream, and any other read error as it is.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.data = r.data[:0]
	r.name = ""
	r.hasData = false
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			if errors.Is(err, io.EOF) && len(line) == 0 {
				if r.hasData {
					return Event{Name: r.name, Data: r.data}, nil
				}
				return Event{}, err
			}
			if !errors.Is(err, io.EOF) {
				return Event{}, err
			}
			// A last line without its newline: process it, then report EOF
			// on the following call.
		}
		if len(line) == 0 {
			if r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			r.name = ""
			if r.err != nil {
				return Event{}, r.err
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
		if r.err != nil {
			if r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			return Event{}, r.err
		}
	}
}

// field applies one non-empty line to the pending event.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment, used as keep-alive
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value) >= MaxEvent {
			return &TooLargeError{What: "event", Limit: MaxEvent}
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		// Streams repeat a few names; reuse the last string to avoid an
		// allocation per event.
		if string(value) != r.last {
			r.last = string(value)
		}
		r.name = r.last
	}
	// "id", "retry" and unknown fields are ignored.
	return nil
}

// readLine returns the next line without its line end. The slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.line = append(r.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.line) > MaxLine {
				return nil, &TooLargeError{What: "line", Limit: MaxLine}
			}
			line, err = r.br.ReadSlice('\n')
			r.line = append(r.line, line...)
		}
		line = r.line
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, err
}
