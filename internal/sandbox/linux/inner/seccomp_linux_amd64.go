package inner

import "golang.org/x/sys/unix"

const AuditArch = unix.AUDIT_ARCH_X86_64

// archPrologue kills x32 system calls (nr with bit 30 set), which would
// otherwise reach the kernel under numbers this filter does not check.
// i386 calls (int 0x80) carry AUDIT_ARCH_I386 and die on the arch check.
// metaSyscalls change a file's mode, owner, times or extended attributes,
// which Landlock does not mediate; denied where no read-only mount view
// holds them (helperConfig.DenyMeta). Every form, path and descriptor: a
// descriptor opened for reading anywhere would do, and seccomp can see
// neither the path nor how the descriptor was opened.
var metaSyscalls = []uint32{
	unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2,
	unix.SYS_CHOWN, unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT, unix.SYS_UTIMENSAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
	unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT,
}

func archPrologue() []Bpf {
	return []Bpf{
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000},
		ret(RetKill),
	}
}
