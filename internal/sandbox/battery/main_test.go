package battery

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// batteryEnv asks a re-executed test binary (as an unprivileged user) to
// run the escape battery for the named variant and exit with the number
// of escapes.
const batteryEnv = "HARNESS_SANDBOX_TEST_BATTERY"

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production, and run the battery when re-executed.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	if v := os.Getenv(batteryEnv); v != "" {
		b, opts := testVariant(v)
		n, err := Run(context.Background(), b, os.Stdout, opts...)
		if err != nil {
			fmt.Println(batteryEnv, "error:", err)
			os.Exit(100)
		}
		os.Exit(n)
	}
	os.Exit(m.Run())
}

// perCommand marks a backend name in tests: that backend without the
// launcher, a fresh sandbox per command.
const perCommand = "/per-command"

// testVariant splits "bwrap/per-command" into a backend and Open options.
func testVariant(v string) (string, []sandbox.Option) {
	if b, ok := strings.CutSuffix(v, perCommand); ok {
		return b, []sandbox.Option{sandbox.WithEnv(testEnv), sandbox.WithLauncher(false)}
	}
	return v, []sandbox.Option{sandbox.WithEnv(testEnv), sandbox.WithLauncher(true)}
}

// testEnv is the environment the tests give the sandbox: the container
// backend's image is HARNESS_TEST_IMAGE (see .ci/run), nothing else.
func testEnv(k string) string {
	if k == sandbox.ImageEnv {
		return os.Getenv("HARNESS_TEST_IMAGE")
	}
	return ""
}
