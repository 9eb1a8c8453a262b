package mcp

import (
	"errors"
	"fmt"
)

// maxMessage bounds one message harness reads from an MCP server, on every
// transport (a stdio line, an HTTP body, an event-stream line or event):
// 16 MiB, the official Go SDK's bound for a stdio frame
// (DefaultMaxLineLength). A server that sends more is not buffered: what
// is over is read and discarded as it comes, the calls waiting fail with a
// tooLargeError, and the server's session goes on with its next message.
const maxMessage = 16 << 20

// maxDiscard bounds what is discarded of one line over maxMessage: past it
// the session ends (a variable for the tests).
var maxDiscard int64 = 1 << 30

// tooLargeError is a message from the server over maxMessage.
type tooLargeError struct {
	what string // "a message", "an event-stream line"…
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s over %d MiB, the limit for one MCP message; it was discarded unread", e.what, maxMessage>>20)
}

// isTooLarge reports a message over maxMessage.
func isTooLarge(err error) bool {
	var tl *tooLargeError
	return errors.As(err, &tl)
}

// grow makes room for n more bytes in b, doubling its capacity when it
// must grow (the runtime grows a large slice by a quarter at a time, and a
// message near the limit would be copied some twenty times on its way).
func grow(b []byte, n int) []byte {
	if len(b)+n > cap(b) {
		nb := make([]byte, len(b), max(2*cap(b), len(b)+n, 4096))
		copy(nb, b)
		b = nb
	}
	return b
}
