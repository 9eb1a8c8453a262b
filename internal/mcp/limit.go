package mcp

import (
	"fmt"
	"strings"
)

// maxMessage bounds one message harness reads from an MCP server: 16 MiB,
// the official Go SDK's bound for a stdio line (DefaultMaxLineLength) and
// an event of an HTTP event stream (DefaultMaxEventSize), given to its
// transports explicitly so the bound is harness's decision. A server that
// sends more is not buffered: the SDK's reader stops at the bound, ends
// that server's session, and harness stops the server and says why.
const maxMessage = 16 << 20

// overLimit says err in harness's words when it is the SDK's refusal of
// a stdio line over maxMessage (its error is not exported: its text is
// matched, and TestServerHugeLineBounded fails if it changes).
func overLimit(err error) error {
	if err == nil || !strings.Contains(err.Error(), "maximum line length") {
		return err
	}
	return fmt.Errorf("it sent a message over %d MiB, the limit for one MCP message: %w", maxMessage>>20, err)
}
