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

// writeCalls: see seccomp_linux_amd64.go (arm64 has only the *at forms).
var writeCalls = map[uint32]writeCall{
	unix.SYS_OPENAT:    {flagsArg: 2, paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_OPENAT2:   {howArg: 2, paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_RENAMEAT:  {paths: []argPair{{0, 1}, {2, 3}}},
	unix.SYS_RENAMEAT2: {paths: []argPair{{0, 1}, {2, 3}}},
	unix.SYS_UNLINKAT:  {paths: []argPair{{0, 1}}},
	unix.SYS_MKDIRAT:   {paths: []argPair{{0, 1}}},
	unix.SYS_LINKAT:    {paths: []argPair{{2, 3}}},
	unix.SYS_SYMLINKAT: {paths: []argPair{{1, 2}}},
	unix.SYS_TRUNCATE:  {paths: []argPair{{-1, 0}}, follows: true},
	unix.SYS_MKNODAT:   {paths: []argPair{{0, 1}}},
	unix.SYS_FCHMOD:    {paths: []argPair{{0, -1}}},
	unix.SYS_FCHMODAT:  {paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_FCHMODAT2: {paths: []argPair{{0, 1}}, follows: true},
}
