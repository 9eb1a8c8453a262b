//go:build unix && !linux

package sandbox

import "syscall"

func procAttr(treeMode) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
