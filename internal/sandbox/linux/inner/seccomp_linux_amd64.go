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

// writeCalls are the calls the write-attribution filter reports
// (wrote_linux.go): each path a call may create, change or remove, as
// (dirfd argument, path argument) pairs; -1 for the dirfd is the working
// directory, -1 for the path the descriptor itself.
var writeCalls = map[uint32]writeCall{
	unix.SYS_OPEN:      {flagsArg: 1, paths: []argPair{{-1, 0}}, follows: true},
	unix.SYS_OPENAT:    {flagsArg: 2, paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_CREAT:     {paths: []argPair{{-1, 0}}, follows: true},
	unix.SYS_OPENAT2:   {howArg: 2, paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_RENAME:    {paths: []argPair{{-1, 0}, {-1, 1}}},
	unix.SYS_RENAMEAT:  {paths: []argPair{{0, 1}, {2, 3}}},
	unix.SYS_RENAMEAT2: {paths: []argPair{{0, 1}, {2, 3}}},
	unix.SYS_UNLINK:    {paths: []argPair{{-1, 0}}},
	unix.SYS_UNLINKAT:  {paths: []argPair{{0, 1}}},
	unix.SYS_MKDIR:     {paths: []argPair{{-1, 0}}},
	unix.SYS_MKDIRAT:   {paths: []argPair{{0, 1}}},
	unix.SYS_RMDIR:     {paths: []argPair{{-1, 0}}},
	unix.SYS_LINK:      {paths: []argPair{{-1, 1}}},
	unix.SYS_LINKAT:    {paths: []argPair{{2, 3}}},
	unix.SYS_SYMLINK:   {paths: []argPair{{-1, 1}}},
	unix.SYS_SYMLINKAT: {paths: []argPair{{1, 2}}},
	unix.SYS_TRUNCATE:  {paths: []argPair{{-1, 0}}, follows: true},
	unix.SYS_MKNOD:     {paths: []argPair{{-1, 0}}},
	unix.SYS_MKNODAT:   {paths: []argPair{{0, 1}}},
	unix.SYS_CHMOD:     {paths: []argPair{{-1, 0}}, follows: true},
	unix.SYS_FCHMOD:    {paths: []argPair{{0, -1}}},
	unix.SYS_FCHMODAT:  {paths: []argPair{{0, 1}}, follows: true},
	unix.SYS_FCHMODAT2: {paths: []argPair{{0, 1}}, follows: true},
}
