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
// ends in the middle of is dropped, as the spec says.
type sseReader struct {
	br    *bufio.Reader
	id    string
	retry int // milliseconds; 0 until the stream sets it
	cr    bool
}

// maxSSELine bounds one line (one message is one line): 64 MB.
const maxSSELine = 64 << 20

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, 32<<10)} }

var errSSELine = errors.New("an event-stream line over 64 MB")

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
		if i < 0 {
			b = append(b, buf...)
			s.br.Discard(len(buf))
			if len(b) > maxSSELine {
				return "", errSSELine
			}
			continue
		}
		b = append(b, buf[:i]...)
		s.cr = buf[i] == '\r'
		s.br.Discard(i + 1)
		return string(b), nil
	}
}

// next returns the next event; io.EOF when the stream ended cleanly.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data strings.Builder
	has := false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF // a last line without its end: the event is incomplete
			}
			return sseEvent{}, err
		}
		if line == "" {
			if !has {
				ev.Name = ""
				continue
			}
			if ev.Name == "" {
				ev.Name = "message"
			}
			ev.Data = strings.TrimSuffix(data.String(), "\n")
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
			data.WriteString(value)
			data.WriteByte('\n')
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
