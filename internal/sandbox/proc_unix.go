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
	// treeGroup: the started process leads a process group that is killed
	// whole. For bwrap that process is bwrap itself: its death kills (by
	// --die-with-parent) the init of the command's PID namespace, and the
	// kernel then kills every process inside, setsid or not. For none and
	// seatbelt a grandchild that calls setsid leaves the group.
	treeGroup treeMode = iota
)

// killTree kills p's process group, then p. The group is signalled only
// while p is not yet reaped (os.Process says so without a syscall once it
// is): an unreaped leader holds its pid, so the group's number is still
// its own; once reaped, and its group empty, the number may be reused by
// any process of the host that leads a group, which a kill would hit.
func killTree(p *os.Process, _ treeMode) {
	if p.Signal(syscall.Signal(0)) == nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
	_ = p.Kill()
}

func signalOf(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 1
}
