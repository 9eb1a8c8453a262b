package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// netProbeEnv asks it to run the network probe (ProbeNetwork) for the
// named variant and exit with the number of failures.
const netProbeEnv = "HARNESS_SANDBOX_TEST_NETPROBE"

// TestMain lets the test binary serve as the sandbox helper, as the
// harness binary does in production.
func TestMain(m *testing.M) {
	stallIfAsked()
	inner.RunHelperIfRequested()
	// A re-executed test binary (as an unprivileged user) runs one probe
	// set and exits with the number that failed.
	for env, probe := range map[string]func(context.Context, string, io.Writer, ...Option) (int, error){
		netProbeEnv: ProbeNetwork,
	} {
		if v := os.Getenv(env); v != "" {
			b, opts := testVariant(v)
			n, err := probe(context.Background(), b, os.Stdout, opts...)
			if err != nil {
				fmt.Println(env, "error:", err)
				os.Exit(100)
			}
			os.Exit(n)
		}
	}
	boundsMode()
	os.Exit(m.Run())
}

// perCommand marks a backend name in tests: that backend without the
// launcher, a fresh sandbox per command.
const perCommand = "/per-command"

// testVariant splits "bwrap/per-command" into a backend and Open options.
func testVariant(v string) (string, []Option) {
	if b, ok := strings.CutSuffix(v, perCommand); ok {
		return b, []Option{WithEnv(testEnv), WithLauncher(false)}
	}
	return v, []Option{WithEnv(testEnv), WithLauncher(true)}
}

// testEnv is the environment the tests give the sandbox (it reads none of
// its own): the container backend's image is HARNESS_TEST_IMAGE (see
// .ci/run), and nothing else is set.
func testEnv(k string) string {
	if k == ImageEnv {
		return os.Getenv("HARNESS_TEST_IMAGE")
	}
	return ""
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func content(p string) string { b, _ := os.ReadFile(p); return string(b) }

// parallelTests: the tests marked t.Parallel are the ones that share
// nothing with another test but the machine: each makes its own project
// and session under a temporary directory of its own, reads no package
// variable another test sets (noUserNamespaces is set only by sequential
// tests, which all end before a parallel one starts), sets no environment
// variable, listens on no fixed port and asserts no time. They are the
// long ones (a Go build, git's object store, 200,500 files), so two at a
// time fill both cores of a CI machine when the package runs alone.
// Sequential on purpose: the resource bounds, the cgroup, timeout, stall
// and survivor tests (limits, the kill scan and timing, which load would
// blur), the network and proxy tests (the proxy's fixed port where a
// backend shares the host's network), and those that set a package
// variable or the environment. (For a while they ran one at a time: in
// CI the host git commands of two of them were SIGKILLed. The cause was
// the harness's, not the tests': a session opened while another's Start
// had the main thread inside a command's v1 cgroup took that cgroup for
// the harness's own; see cgroup's TestOwnDirWhileTheMainThreadIsInside.)
