package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// sseEvent is one event of a text/event-stream (the WHATWG HTML spec's
// server-sent events): both HTTP transports carry messages in them.
type sseEvent struct {
	Name string // "message" when the stream names none
	Data string
	ID   string // the stream's last event id, as of this event
}

// sseReader parses a stream: "data" lines joined with "\n", "event",
// "id" (kept across events, as Last-Event-ID for a resumption) and
// "retry" (the reconnection delay), comments (":") ignored, lines ended by
// LF, CRLF or CR, an event ended by a blank line. An event the stream
// ends in the middle of is dropped, as the spec says. A line or an event
// over maxMessage is a tooLargeError, as soon as it goes over; the rest of
// it is then read and discarded, never held, and the next call returns
// the event after it.
type sseReader struct {
	br        *bufio.Reader
	id        string
	retry     int // milliseconds; 0 until the stream sets it
	cr        bool
	skipLine  bool // the line being read went over maxMessage
	skipEvent bool // the event being read went over maxMessage
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, 32<<10)} }

// line reads one line without its end. A CR ends a line; an LF right
// after it is skipped (when the next line is read, so a stream that ends
// its lines with CR alone is not waited on).
func (s *sseReader) line() (string, error) {
	var b []byte
	for {
		if _, err := s.br.Peek(1); err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return string(b), io.ErrUnexpectedEOF
			}
			return "", err
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		if s.cr {
			s.cr = false
			if buf[0] == '\n' {
				s.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if s.skipLine {
			if i < 0 {
				s.br.Discard(len(buf))
				continue
			}
			s.skipLine = false
			s.cr = buf[i] == '\r'
			s.br.Discard(i + 1)
			continue
		}
		if i < 0 {
			if len(b)+len(buf) > maxMessage {
				s.skipLine = true
				s.br.Discard(len(buf))
				return "", &tooLargeError{what: "an event-stream line"}
			}
			b = append(grow(b, len(buf)), buf...)
			s.br.Discard(len(buf))
			continue
		}
		s.cr = buf[i] == '\r'
		s.br.Discard(i + 1)
		if len(b)+i > maxMessage {
			return "", &tooLargeError{what: "an event-stream line"}
		}
		b = append(b, buf[:i]...)
		return string(b), nil
	}
}

// next returns the next event; io.EOF when the stream ended cleanly.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	has := false
	for {
		line, err := s.line()
		if isTooLarge(err) {
			s.skipEvent = true
			return sseEvent{}, err
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF // a last line without its end: the event is incomplete
			}
			return sseEvent{}, err
		}
		if s.skipEvent {
			// The rest of an event over the limit: read, not kept.
			if line == "" {
				s.skipEvent = false
			}
			continue
		}
		if line == "" {
			if !has {
				ev.Name = ""
				continue
			}
			if ev.Name == "" {
				ev.Name = "message"
			}
			ev.Data = strings.TrimSuffix(string(data), "\n")
			ev.ID = s.id
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if len(data)+len(value) > maxMessage {
				s.skipEvent = true
				return sseEvent{}, &tooLargeError{what: "an event-stream event"}
			}
			data = append(grow(data, len(value)+1), value...)
			data = append(data, '\n')
			has = true
		case "event":
			ev.Name = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				s.id = value
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 {
				s.retry = n
			}
		}
	}
}
