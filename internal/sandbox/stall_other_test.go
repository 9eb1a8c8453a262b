//go:build !linux

package sandbox

// stallIfAsked exists on Linux only (stall_linux_test.go); elsewhere the
// test binary has nothing to stall.
func stallIfAsked() {}
