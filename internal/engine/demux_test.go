package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// frame is one multiplexed frame: stream, three zero bytes, the length
// big-endian, the payload.
func frame(stream byte, p string) string {
	h := make([]byte, 8, 8+len(p))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(p)))
	return string(append(h, p...))
}

func TestDemux(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, past any buffer
	for _, tc := range []struct {
		name        string
		in          string
		oneByte     bool // the reader hands over one byte at a time
		out, errOut string
		wantErr     string // in the error; "" for none
	}{
		{name: "empty", in: ""},
		{name: "both streams", in: frame(1, "out\n") + frame(2, "err\n") + frame(1, "more\n"), out: "out\nmore\n", errOut: "err\n"},
		{name: "split across reads", oneByte: true, in: frame(1, "out\n") + frame(2, "err\n") + frame(1, "more\n"), out: "out\nmore\n", errOut: "err\n"},
		{name: "empty frames", in: frame(1, "") + frame(2, "") + frame(1, "x"), out: "x"},
		{name: "stdin stream goes to stdout", in: frame(0, "in"), out: "in"},
		{name: "large frame", in: frame(2, big) + frame(1, "after"), out: "after", errOut: big},
		{name: "large frame split", oneByte: true, in: frame(1, big[:100000]), out: big[:100000]},
		{name: "unknown stream", in: frame(1, "ok") + frame(7, "what"), out: "ok", wantErr: "unknown stream 7"},
		{name: "truncated header", in: frame(1, "ok") + frame(1, "x")[:5], out: "ok", wantErr: "within a frame's header"},
		{name: "truncated payload", in: frame(1, "ok") + frame(2, "abcdef")[:11], out: "ok", errOut: "abc", wantErr: "3 bytes short"},
		{name: "engine error", in: frame(1, "ok") + frame(3, "exec failed: no such file") + frame(1, "never"), out: "ok", wantErr: "exec failed: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tc.in)
			if tc.oneByte {
				r = iotest.OneByteReader(r)
			}
			var out, errOut bytes.Buffer
			err := Demux(&out, &errOut, r)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if out.String() != tc.out || errOut.String() != tc.errOut {
				t.Errorf("stdout %.40q (%d bytes), stderr %.40q (%d bytes); want %.40q, %.40q", out.String(), out.Len(), errOut.String(), errOut.Len(), tc.out, tc.errOut)
			}
		})
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// TestDemuxWriteError: a writer's error ends the copy and is returned.
func TestDemuxWriteError(t *testing.T) {
	full := errors.New("disk full")
	err := Demux(failWriter{full}, io.Discard, strings.NewReader(frame(1, "x")+frame(1, "y")))
	if !errors.Is(err, full) {
		t.Errorf("got %v, want the writer's error", err)
	}
}

// TestDemuxReadError: a reader's error (not an end) is returned as is.
func TestDemuxReadError(t *testing.T) {
	broken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(frame(1, "ok")), iotest.ErrReader(broken))
	var out bytes.Buffer
	if err := Demux(&out, io.Discard, r); !errors.Is(err, broken) || out.String() != "ok" {
		t.Errorf("got %v, %q", err, out.String())
	}
}
