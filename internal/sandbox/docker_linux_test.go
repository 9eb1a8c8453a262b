package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/engine"
	"github.com/harness-dev/harness/internal/testenv"
)

// requireDocker skips (or fails, when CI requires docker) unless an engine
// answers and HARNESS_TEST_IMAGE is there. The tests give the backend that
// image as HARNESS_IMAGE through WithEnv(testEnv). (The container
// package's tests have the same check.)
func requireDocker(t testing.TB) {
	t.Helper()
	img := os.Getenv("HARNESS_TEST_IMAGE")
	if img == "" {
		testenv.Missing(t, testenv.Docker, "HARNESS_TEST_IMAGE is not set (see .ci/run)")
	}
	cli, err := engine.New("")
	if err != nil {
		testenv.Missing(t, testenv.Docker, err.Error())
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		testenv.Missing(t, testenv.Docker, "the engine does not answer: "+err.Error())
	}
	if _, err := cli.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, testenv.Docker, "image "+img+": "+err.Error())
	}
}
