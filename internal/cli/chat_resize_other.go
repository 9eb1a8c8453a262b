//go:build !unix

package cli

// notifyResize does nothing where there is no SIGWINCH: the width is
// still re-read on every redraw.
func notifyResize(func()) (stop func()) { return func() {} }
