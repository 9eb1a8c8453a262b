package mcp

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// chunks is a reader that returns its strings one Read at a time, as a
// network delivers a stream.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	if n < len((*c)[0]) {
		(*c)[0] = (*c)[0][n:]
	} else {
		*c = (*c)[1:]
	}
	return n, nil
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []string
		want   []sseEvent
		lastID string
		retry  int
	}{
		{"one message", []string{"event: message\ndata: {\"a\":1}\n\n"}, []sseEvent{{Name: "message", Data: `{"a":1}`}}, "", 0},
		{"no event name is message", []string{"data: x\n\n"}, []sseEvent{{Name: "message", Data: "x"}}, "", 0},
		{"multi-line data", []string{"data: line one\ndata: line two\ndata:\ndata:  spaced\n\n"}, []sseEvent{{Name: "message", Data: "line one\nline two\n\n spaced"}}, "", 0},
		{"comments", []string{": keep-alive\n\n: another\ndata: after\n: inside\n\n"}, []sseEvent{{Name: "message", Data: "after"}}, "", 0},
		{"split across reads", []string{"ev", "ent: endpoint\nda", "ta: /messages?s", "ession=1\n", "\n", "data: {\"b\"", ":2}\n\n"},
			[]sseEvent{{Name: "endpoint", Data: "/messages?session=1"}, {Name: "message", Data: `{"b":2}`}}, "", 0},
		{"id and retry", []string{"id: 7\nretry: 1500\ndata: a\n\ndata: b\n\nid: 8\ndata: c\n\n"},
			[]sseEvent{{Name: "message", Data: "a", ID: "7"}, {Name: "message", Data: "b", ID: "7"}, {Name: "message", Data: "c", ID: "8"}}, "8", 1500},
		{"a priming event: id, no data", []string{"id: p1\ndata:\n\nid: p2\n\n"}, []sseEvent{{Name: "message", Data: "", ID: "p1"}}, "p2", 0},
		{"bad retry ignored", []string{"retry: soon\ndata: a\n\n"}, []sseEvent{{Name: "message", Data: "a"}}, "", 0},
		{"CRLF", []string{"event: message\r\ndata: a\r\n\r\ndata: b\r", "\n\r\n"}, []sseEvent{{Name: "message", Data: "a"}, {Name: "message", Data: "b"}}, "", 0},
		{"CR alone", []string{"data: a\r\rdata: b\r\r"}, []sseEvent{{Name: "message", Data: "a"}, {Name: "message", Data: "b"}}, "", 0},
		{"a field without a colon", []string{"data\n\n"}, []sseEvent{{Name: "message", Data: ""}}, "", 0},
		{"unknown fields ignored", []string{"foo: bar\ndata: a\n\n"}, []sseEvent{{Name: "message", Data: "a"}}, "", 0},
		{"an event cut off by the end is dropped", []string{"data: a\n\ndata: cut"}, []sseEvent{{Name: "message", Data: "a"}}, "", 0},
		{"an event without its blank line is dropped", []string{"data: a\n\ndata: b\n"}, []sseEvent{{Name: "message", Data: "a"}}, "", 0},
		{"event name does not leak", []string{"event: endpoint\n\ndata: a\n\n"}, []sseEvent{{Name: "message", Data: "a"}}, "", 0},
	} {
		for _, oneByte := range []bool{false, true} {
			name := tc.name
			if oneByte {
				name += "/one byte at a time"
			}
			t.Run(name, func(t *testing.T) {
				c := chunks(append([]string(nil), tc.in...))
				var r io.Reader = &c
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				s := newSSEReader(r)
				var got []sseEvent
				for {
					ev, err := s.next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("events:\n got %q\nwant %q", got, tc.want)
				}
				if s.id != tc.lastID || s.retry != tc.retry {
					t.Errorf("last id %q retry %d, want %q %d", s.id, s.retry, tc.lastID, tc.retry)
				}
			})
		}
	}
}

// TestSSEReaderBig: a message of megabytes is one line, read whole.
func TestSSEReaderBig(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	s := newSSEReader(strings.NewReader("data: " + big + "\n\n"))
	ev, err := s.next()
	if err != nil || ev.Data != big {
		t.Fatalf("%v, %d bytes", err, len(ev.Data))
	}
	if _, err := s.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after: %v", err)
	}
}

// TestSSEReaderError: a stream that breaks returns the break, not EOF.
func TestSSEReaderError(t *testing.T) {
	broken := errors.New("connection reset")
	s := newSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(broken)))
	if ev, err := s.next(); err != nil || ev.Data != "a" {
		t.Fatalf("first: %+v %v", ev, err)
	}
	if _, err := s.next(); !errors.Is(err, broken) {
		t.Errorf("second: %v", err)
	}
}
