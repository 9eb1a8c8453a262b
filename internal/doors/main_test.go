package doors

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// doorsEnv asks a re-executed test binary (as an unprivileged user) to run
// the battery with the named backend and exit with the number of doors
// that let an attack through.
const doorsEnv = "HARNESS_TEST_DOORS"

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production, and run the battery when re-executed.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	if b := os.Getenv(doorsEnv); b != "" {
		n, err := Run(context.Background(), b, os.Stdout)
		if err != nil {
			fmt.Println(doorsEnv, "error:", err)
			os.Exit(100)
		}
		os.Exit(n)
	}
	os.Exit(m.Run())
}
