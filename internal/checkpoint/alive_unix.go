//go:build unix

package checkpoint

import (
	"errors"
	"syscall"
)

// alive reports whether a process pid exists (signal 0 reaches it, or
// it exists under another user).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
