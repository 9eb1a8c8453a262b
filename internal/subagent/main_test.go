package subagent

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	os.Exit(m.Run())
}
