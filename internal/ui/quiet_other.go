//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package ui

// Quiet is a no-op where terminal modes are not handled.
func (in *Input) Quiet() (restore func()) { return func() {} }
