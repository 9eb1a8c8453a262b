package mcp

// maxMessage bounds one message harness reads from an MCP server: 16 MiB,
// the official Go SDK's bound for a stdio line (DefaultMaxLineLength) and
// an event of an HTTP event stream (DefaultMaxEventSize), given to its
// transports explicitly so the bound is harness's decision. A server that
// sends more is not buffered: the SDK's reader stops at the bound, ends
// that server's session, and harness stops the server and says why.
const maxMessage = 16 << 20
