//go:build unix

package sandbox

import (
	"os"
	"os/exec"
	"syscall"
)

// treeMode says how a command's process tree is contained.
type treeMode int

const (
	// treeGroup: a process group; a grandchild that calls setsid leaves it
	// (none and seatbelt only).
	treeGroup treeMode = iota
	// treeNamespace: the started process is, or is tied to, the init of a
	// PID namespace; killing it makes the kernel kill every process inside.
	treeNamespace
)

func killTree(p *os.Process, _ treeMode) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}

func signalOf(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 1
}
