package sandbox

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// batteryEnv asks a re-executed test binary (as an unprivileged user) to
// run the escape battery for the named backend and exit with the number
// of escapes.
const batteryEnv = "HARNESS_SANDBOX_TEST_BATTERY"

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production.
func TestMain(m *testing.M) {
	RunHelperIfRequested()
	if b := os.Getenv(batteryEnv); b != "" {
		n, err := Battery(context.Background(), b, os.Stdout)
		if err != nil {
			fmt.Println("battery error:", err)
			os.Exit(100)
		}
		os.Exit(n)
	}
	os.Exit(m.Run())
}
