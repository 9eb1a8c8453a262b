package sandbox

import (
	"os"
	"syscall"
)

// treeUserPID: the helper is started as the init of new user and PID
// namespaces (landlock backend), so killing it kills every descendant,
// including ones that called setsid.
const treeUserPID treeMode = 2

func procAttr(m treeMode) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if m == treeUserPID {
		uid, gid := os.Getuid(), os.Getgid()
		a.Setpgid = false
		a.Setsid = true
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		// Root inside the new user namespace, so the helper keeps the
		// capabilities it needs for its mounts across execve; it drops them
		// all (and locks the securebits) before running the command.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}
