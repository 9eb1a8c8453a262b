package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct{ name, data string }

func readAll(t *testing.T, r io.Reader) ([]ev, error) {
	t.Helper()
	sr := NewReader(r)
	var out []ev
	for {
		e, err := sr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data)})
	}
}

func TestNext(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"anthropic", "event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n",
			[]ev{{"message_start", `{"a":1}`}, {"ping", "{}"}}},
		{"openai with done", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"x":1}`}, {"", "[DONE]"}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\n", []ev{{"a", "1"}}},
		{"comments and keep-alives", ": OPENROUTER PROCESSING\n\n:\n\ndata: 2\n\n", []ev{{"", "2"}}},
		{"multi-line data", "data: a\ndata: b\n\n", []ev{{"", "a\nb"}}},
		{"no space after colon", "data:x\n\n", []ev{{"", "x"}}},
		{"last event without blank line", "data: 1\n\ndata: [DONE]", []ev{{"", "1"}, {"", "[DONE]"}}},
		{"last event without newline after blank", "data: 1\n", []ev{{"", "1"}}},
		{"event name without data is dropped", "event: x\n\ndata: y\n\n", []ev{{"", "y"}}},
		{"id and retry ignored", "id: 4\nretry: 10\ndata: z\n\n", []ev{{"", "z"}}},
		{"long line", "data: " + strings.Repeat("a", 200000) + "\n\n", []ev{{"", strings.Repeat("a", 200000)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "byte"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode == "byte" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAll(t, r)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%s: err = %v, want io.EOF", mode, err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("%s: got %q, want %q", mode, got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("%s: event %d = %q, want %q", mode, i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestNextReportsBrokenStream(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: {\"par"), iotest.ErrReader(boom))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(got) != 1 || got[0].data != "1" {
		t.Fatalf("got %q, want only the complete event", got)
	}
}
