//go:build !linux

package sandbox

// boundsMode is TestMain's hook; the bounds test runs on Linux only.
func boundsMode() {}
