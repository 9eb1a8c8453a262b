package subagent

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested()
	os.Exit(m.Run())
}
