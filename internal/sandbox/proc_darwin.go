package sandbox

import (
	"syscall"
)

// treeSession: the command starts in a new session (setsid) with no
// controlling terminal, leading its own process group; a kqueue tracker
// (below) follows what it forks.
const treeSession treeMode = 3

func procAttr(m treeMode) *syscall.SysProcAttr {
	if m == treeSession {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}
