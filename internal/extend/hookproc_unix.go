//go:build unix

package extend

import (
	"os/exec"
	"syscall"
)

// ownGroup runs a user's hook in a process group of its own and makes
// its cancellation (Esc, Ctrl-C, the timeout) kill the whole group at
// once: a hook's children (sleep, a build) otherwise keep its output
// open and the turn waits for WaitDelay.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
