//go:build !linux && !darwin

package sandbox

import "errors"

// newBatteryFixture: the escape battery's probes exist for Linux and macOS.
func newBatteryFixture() (batteryFixture, error) {
	return nil, errors.New("the escape battery runs on Linux and macOS only")
}

func batteryMode(Sandbox) string { return "" }

func batteryHeader(sb Sandbox) []string {
	return []string{"resource bounds: " + sb.Policy().LimitsText()}
}
