package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is applied with raw syscalls on the helper's locked OS thread,
// right before that thread execs the command: Landlock domains (like
// seccomp filters and no_new_privs) are per thread and inherited over
// execve, so nothing needs to reach the Go runtime's other threads. (The
// go-landlock library enforces on all threads through libpsx, which needs
// cgo tricks that do not mix with -race builds.)

const (
	llExecute     = 1 << 0
	llWriteFile   = 1 << 1
	llReadFile    = 1 << 2
	llReadDir     = 1 << 3
	llRemoveDir   = 1 << 4
	llRemoveFile  = 1 << 5
	llMakeChar    = 1 << 6
	llMakeDir     = 1 << 7
	llMakeReg     = 1 << 8
	llMakeSock    = 1 << 9
	llMakeFifo    = 1 << 10
	llMakeBlock   = 1 << 11
	llMakeSym     = 1 << 12
	llRefer       = 1 << 13 // ABI 2
	llTruncate    = 1 << 14 // ABI 3
	llFileRights  = llExecute | llWriteFile | llReadFile | llTruncate
	llNetBindTCP  = 1 << 0 // ABI 4
	llNetConnTCP  = 1 << 1
	llScopeAbsUnx = 1 << 0 // ABI 6
	llScopeSignal = 1 << 1
)

// landlockAttr is the ABI 6 ruleset attribute; older kernels accept it as
// long as the fields they do not know are zero.
type landlockAttr struct {
	fs, net, scoped uint64
}

type landlockPathBeneath struct {
	allowed  uint64
	parentFd int32
}

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT, which x/sys lacks.
const landlockRuleNetPort = 2

// landlockNetPort is struct landlock_net_port_attr (ABI 4).
type landlockNetPort struct {
	allowed uint64
	port    uint64
}

// LandlockABI returns the kernel's Landlock ABI version, or 0 when Landlock
// is missing or disabled.
func LandlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// applyLandlock restricts the calling thread: writes only beneath write
// (reads stay open), and, with noNet, no TCP bind or connect. It returns
// the ABI used, 0 when Landlock is unavailable (the caller decides whether
// that is fatal).
func applyLandlock(write []string, noNet bool, connectPorts []int) (int, error) {
	abi := LandlockABI()
	if abi < 1 {
		return 0, nil
	}
	var handled uint64 = llWriteFile | llRemoveDir | llRemoveFile | llMakeChar | llMakeDir |
		llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym
	if abi >= 2 {
		handled |= llRefer
	}
	if abi >= 3 {
		handled |= llTruncate
	}
	attr := landlockAttr{fs: handled}
	if noNet && abi >= 4 {
		attr.net = llNetBindTCP | llNetConnTCP
	}
	if abi >= 6 {
		attr.scoped = llScopeAbsUnx | llScopeSignal
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return abi, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	// Device files every shell expects to write to.
	paths := append([]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}, write...)
	for i, p := range paths {
		pfd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if i >= 6 {
				return abi, fmt.Errorf("landlock: opening writable root %s: %w", p, err)
			}
			continue
		}
		var st unix.Stat_t
		allowed := handled
		if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			allowed &= llFileRights
		}
		rule := landlockPathBeneath{allowed: allowed, parentFd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(pfd)
		if e != 0 {
			return abi, fmt.Errorf("landlock_add_rule %s: %w", p, e)
		}
	}
	for _, port := range connectPorts {
		if !noNet || abi < 4 || port <= 0 {
			break
		}
		rule := landlockNetPort{allowed: llNetConnTCP, port: uint64(port)}
		if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return abi, fmt.Errorf("landlock_add_rule port %d: %w", port, e)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return abi, fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return abi, nil
}
