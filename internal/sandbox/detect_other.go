//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func detect() (string, string) {
	return "", "no sandbox backend exists for " + runtime.GOOS
}

func openBackend(name string, _ *walls.Live, _ string, _ openOptions) (Sandbox, error) {
	return nil, fmt.Errorf("%w: no %s backend on %s: pass --sandbox none to run without walls (every command then needs approval)", ErrUnavailable, name, runtime.GOOS)
}
