//go:build !linux && !darwin

package battery

import (
	"errors"

	"github.com/harness-dev/harness/internal/sandbox"
)

// newBatteryFixture: the escape battery's probes exist for Linux and macOS.
func newBatteryFixture() (batteryFixture, error) {
	return nil, errors.New("the escape battery runs on Linux and macOS only")
}

func batteryMode(sandbox.Sandbox) string { return "" }

func batteryHeader(sb sandbox.Sandbox) []string {
	return []string{"resource bounds: " + sb.Policy().LimitsText()}
}
