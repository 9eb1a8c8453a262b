package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production.
func TestMain(m *testing.M) {
	RunHelperIfRequested()
	os.Exit(m.Run())
}
