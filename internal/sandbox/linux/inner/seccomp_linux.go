package inner

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is a classic BPF program over struct seccomp_data:
// nr at offset 0, arch at 4, args[i] at 16+8i (low word first on the
// little-endian architectures harness builds for).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24

	RetAllow = unix.SECCOMP_RET_ALLOW
	RetKill  = unix.SECCOMP_RET_KILL_PROCESS
	RetEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)

	// cloneNamespaces are the clone(2) flags that create namespaces.
	CloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME
)

// deniedSyscalls fail with EPERM; the package doc says which threat each
// closes.
var DeniedSyscalls = []uint32{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_SETNS, unix.SYS_UNSHARE,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_KEXEC_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
}

type Bpf = unix.SockFilter

func stmt(code uint16, k uint32) Bpf { return Bpf{Code: code, K: k} }
func jeq(k uint32, jt, jf uint8) Bpf {
	return Bpf{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

func load(off uint32) Bpf { return stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func ret(k uint32) Bpf    { return stmt(unix.BPF_RET|unix.BPF_K, k) }

// filterOptions are what differs between the filters harness installs.
type FilterOptions struct {
	// denyAllSockets also denies socket() for every address family (the
	// landlock backend without a network namespace); socketpair(2) stays
	// allowed either way.
	DenyAllSockets bool
	// denyMeta denies metaSyscalls (the landlock backend without a mount
	// namespace, where nothing else holds them outside the project).
	DenyMeta bool
}

func filterFor(cfg HelperConfig) FilterOptions {
	return FilterOptions{DenyAllSockets: cfg.DenySockets == "all", DenyMeta: cfg.DenyMeta}
}

// seccompProgram builds the filter.
func SeccompProgram(o FilterOptions) []Bpf {
	p := []Bpf{
		load(offArch),
		jeq(AuditArch, 1, 0),
		ret(RetKill),
		load(offNr),
	}
	p = append(p, archPrologue()...)
	// socket(family, …)
	var sock []Bpf
	if o.DenyAllSockets {
		sock = []Bpf{ret(RetEPERM)}
	} else {
		sock = []Bpf{
			load(offArg0),
			jeq(unix.AF_UNIX, 0, 1), ret(RetEPERM),
			jeq(unix.AF_VSOCK, 0, 1), ret(RetEPERM),
			ret(RetAllow),
		}
	}
	p = append(p, jeq(unix.SYS_SOCKET, 0, uint8(len(sock))))
	p = append(p, sock...)
	// ioctl(fd, request, …): the request is an unsigned int, so only its
	// low word counts.
	tty := []Bpf{
		load(offArg1),
		jeq(unix.TIOCSTI, 0, 1), ret(RetEPERM),
		jeq(unix.TIOCLINUX, 0, 1), ret(RetEPERM),
		ret(RetAllow),
	}
	p = append(p, jeq(unix.SYS_IOCTL, 0, uint8(len(tty))))
	p = append(p, tty...)
	// clone(flags, …) creating namespaces; clone3 hides its flags in
	// memory seccomp cannot read, so it reports ENOSYS and libc falls back
	// to clone.
	cl := []Bpf{
		load(offArg0),
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: CloneNamespaces},
		ret(RetEPERM),
		ret(RetAllow),
	}
	p = append(p, jeq(unix.SYS_CLONE, 0, uint8(len(cl))))
	p = append(p, cl...)
	p = append(p, jeq(unix.SYS_CLONE3, 0, 1), ret(retNoSys))
	for _, nr := range DeniedSyscalls {
		p = append(p, jeq(nr, 0, 1), ret(RetEPERM))
	}
	if o.DenyMeta {
		for _, nr := range metaSyscalls {
			p = append(p, jeq(nr, 0, 1), ret(RetEPERM))
		}
	}
	return append(p, ret(RetAllow))
}

// applySeccomp installs the filter on the calling thread (which then execs).
// no_new_privs must already be set.
func applySeccomp(o FilterOptions) error {
	if AuditArch == 0 {
		return fmt.Errorf("no seccomp filter for this architecture; use the bwrap backend on amd64 or arm64")
	}
	prog := SeccompProgram(o)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	return nil
}

// applySeccompAllThreads installs the filter on every thread of the
// calling process (SECCOMP_FILTER_FLAG_TSYNC), which also sets
// no_new_privs on them all: the launcher's Go runtime has many threads,
// and every process it starts must inherit the filter whichever thread
// forks it.
func applySeccompAllThreads(o FilterOptions) error {
	if AuditArch == 0 {
		return fmt.Errorf("no seccomp filter for this architecture; use the bwrap backend on amd64 or arm64")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	prog := SeccompProgram(o)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("installing the seccomp filter on every thread: %w", e)
	}
	if r != 0 {
		return fmt.Errorf("installing the seccomp filter on every thread: thread %d could not take it", r)
	}
	return nil
}
