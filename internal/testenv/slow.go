package testenv

import (
	"os"
	"strconv"
	"time"
)

// SlowEnv names a factor by which a machine is slower than the ones the
// tests' deadlines were set on: .ci/cgroup2-vm sets it for its emulated
// (TCG) guest, which shares two cores with the host's whole suite.
const SlowEnv = "HARNESS_TEST_SLOW"

// Scaled is d stretched by HARNESS_TEST_SLOW (a whole number, 1 when
// unset or not a number above 1). Only deadlines that a slow machine
// misses, and whose missing a test does not mistake for the property it
// checks, are scaled.
func Scaled(d time.Duration) time.Duration {
	if n, err := strconv.Atoi(os.Getenv(SlowEnv)); err == nil && n > 1 {
		return d * time.Duration(n)
	}
	return d
}
