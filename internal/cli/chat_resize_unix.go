//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyResize calls f on every SIGWINCH until stop is called.
func notifyResize(f func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				f()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
