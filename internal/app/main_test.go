package app

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// TestMain lets the test binary serve as the sandbox's helper and
// launcher, as the harness binary does: a real backend re-executes the
// running binary, and without this that binary would run the tests again
// instead of the command (the self-check then times out).
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	mcptest.RunIfRequested() // the Go MCP server the MCP tests configure
	os.Exit(m.Run())
}
