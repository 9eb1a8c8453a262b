package inner

import "golang.org/x/sys/unix"

const AuditArch = unix.AUDIT_ARCH_AARCH64

// metaSyscalls: see seccomp_linux_amd64.go (arm64 has only the *at and
// descriptor forms).
var metaSyscalls = []uint32{
	unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_FCHOWN, unix.SYS_FCHOWNAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT,
}

// archPrologue: arm64 has a single system-call ABI (32-bit compat calls
// carry AUDIT_ARCH_ARM and die on the arch check).
func archPrologue() []Bpf { return nil }
