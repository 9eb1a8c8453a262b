package container

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// TestMain lets the test binary serve as the container's init and each
// command's supervisor (it is mounted as Helper), as the harness binary
// does in production.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	os.Exit(m.Run())
}
