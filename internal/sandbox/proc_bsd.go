//go:build unix && !linux && !darwin

package sandbox

import "syscall"

func procAttr(treeMode) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
