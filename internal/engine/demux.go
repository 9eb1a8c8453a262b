package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The streams of a multiplexed frame's header.
const (
	streamStdin  = 0 // written to stdout, as the engine's own client does
	streamStdout = 1
	streamStderr = 2
	streamSystem = 3 // an error of the engine's, ending the stream
)

// maxSystemMessage bounds an engine error read from the stream.
const maxSystemMessage = 64 << 10

// Demux copies the engine's multiplexed output of an exec or a
// container without a TTY to stdout and stderr until r ends. Each frame
// is an 8-byte header (the stream: 1 stdout, 2 stderr, 3 an error of the
// engine's; three zero bytes; the payload's length, big-endian 32 bits)
// and the payload. It returns nil at the end of r between frames, and an
// error for a frame cut short, an unknown stream, or the engine's error.
func Demux(stdout, stderr io.Writer, r io.Reader) error {
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			if err == io.ErrUnexpectedEOF {
				return errors.New("the engine's stream ended within a frame's header")
			}
			return err
		}
		n := int64(binary.BigEndian.Uint32(hdr[4:]))
		var w io.Writer
		switch hdr[0] {
		case streamStdin, streamStdout:
			w = stdout
		case streamStderr:
			w = stderr
		case streamSystem:
			msg, err := io.ReadAll(io.LimitReader(r, min(n, maxSystemMessage)))
			if err != nil {
				return err
			}
			return fmt.Errorf("the engine, in the stream: %s", msg)
		default:
			return fmt.Errorf("the engine's stream: unknown stream %d in a frame's header", hdr[0])
		}
		for n > 0 {
			m, err := io.ReadFull(r, buf[:min(n, int64(len(buf)))])
			if m > 0 {
				if _, werr := w.Write(buf[:m]); werr != nil {
					return werr
				}
			}
			n -= int64(m)
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return fmt.Errorf("the engine's stream ended %d bytes short of a frame's end", n)
			}
			if err != nil {
				return err
			}
		}
	}
}
