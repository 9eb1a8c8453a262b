package tools

import (
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// TestMain lets the test binary serve as the sandbox's helper and
// launcher (a real backend re-executes the running binary), and as the
// dev server and the stand-in harness of the background tests.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	runTestRoles()
	os.Exit(m.Run())
}
