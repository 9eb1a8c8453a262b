package container

import (
	"fmt"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"golang.org/x/sys/unix"
)

// The kernel hands a filter every system call argument as a full 64-bit
// register, but socket(2)'s family and type and ioctl(2)'s request are C
// ints the kernel truncates to their low 32 bits (clone's flags too). A
// profile that compares the whole register is fooled by
// socket(1<<32|AF_UNIX, …). The inner stage's filter has the same test in
// package sandbox (seccomp_args_linux_test.go), over the same calls.

// highWords are the high words the tests set on an argument.
var highWords = []uint64{0, 1, 0x80000000, 0xffffffff}

// wideCalls are the calls and arguments whose high words the kernel
// ignores, each with a low word to try.
var wideCalls = []struct {
	name string
	nr   uint32
	arg  int    // which argument gets the high word
	low  uint64 // its low word
	args []uint64
}{
	{"socket(AF_UNIX)", unix.SYS_SOCKET, 0, unix.AF_UNIX, []uint64{0, unix.SOCK_STREAM, 0}},
	{"socket(AF_UNIX, seqpacket)", unix.SYS_SOCKET, 0, unix.AF_UNIX, []uint64{0, inner.ProxyChannelType, 0}},
	{"socket(AF_VSOCK)", unix.SYS_SOCKET, 0, unix.AF_VSOCK, []uint64{0, unix.SOCK_STREAM, 0}},
	{"socket(AF_INET)", unix.SYS_SOCKET, 0, unix.AF_INET, []uint64{0, unix.SOCK_STREAM, 0}},
	{"socket(AF_NETLINK)", unix.SYS_SOCKET, 0, unix.AF_NETLINK, []uint64{0, unix.SOCK_RAW, 0}},
	{"ioctl(TIOCSTI)", unix.SYS_IOCTL, 1, unix.TIOCSTI, []uint64{0, 0, 0}},
	{"ioctl(TIOCLINUX)", unix.SYS_IOCTL, 1, unix.TIOCLINUX, []uint64{0, 0, 0}},
	{"ioctl(TCGETS)", unix.SYS_IOCTL, 1, unix.TCGETS, []uint64{0, 0, 0}},
	{"clone(CLONE_NEWUSER)", unix.SYS_CLONE, 0, unix.CLONE_NEWUSER | uint64(unix.SIGCHLD), []uint64{0, 0, 0}},
	{"clone(fork)", unix.SYS_CLONE, 0, uint64(unix.SIGCHLD), []uint64{0, 0, 0}},
}

// profileVerdict is what libseccomp makes of the container profile for
// one call on a 64-bit architecture: the action of the first rule naming
// the call whose conditions all hold, each comparing the argument's 64
// bits (libseccomp's SCMP_CMP_* on a 64-bit ABI), else the default. The
// real engine agrees: TestContainerProxy's raw exec, and a profile that
// compared socket's family with SCMP_CMP_EQ let socket(1<<32|AF_UNIX)
// through runc's filter under podman 4.3.1.
func profileVerdict(t *testing.T, prof seccompProfile, name string, args ...uint64) string {
	t.Helper()
	arg := func(i uint) uint64 {
		if int(i) < len(args) {
			return args[i]
		}
		return 0
	}
	for _, r := range prof.Syscalls {
		named := false
		for _, n := range r.Names {
			named = named || n == name
		}
		if !named {
			continue
		}
		hold := true
		for _, c := range r.Args {
			v := arg(c.Index)
			switch c.Op {
			case "SCMP_CMP_EQ":
				hold = hold && v == c.Value
			case "SCMP_CMP_NE":
				hold = hold && v != c.Value
			case "SCMP_CMP_MASKED_EQ":
				hold = hold && v&c.Value == c.ValueTwo
			default:
				t.Fatalf("rule %+v: operator %s is not interpreted here", r, c.Op)
			}
		}
		if hold {
			if r.ErrnoRet != nil {
				return fmt.Sprintf("%s(%d)", r.Action, *r.ErrnoRet)
			}
			return r.Action
		}
	}
	return prof.DefaultAction
}

// TestContainerSeccompArgumentsLowWord: the engine's profile, with the
// proxy channel and without, gives every call of wideCalls with a high
// word the verdict of its low word, refuses the unix sockets a command
// would want and lets through only the init's proxy channel.
func TestContainerSeccompArgumentsLowWord(t *testing.T) {
	eperm := fmt.Sprintf("SCMP_ACT_ERRNO(%d)", unix.EPERM)
	for _, proxy := range []bool{false, true} {
		prof := containerSeccompProfile(proxy)
		names := map[uint32]string{unix.SYS_SOCKET: "socket", unix.SYS_IOCTL: "ioctl", unix.SYS_CLONE: "clone"}
		for _, c := range []struct {
			name string
			args []uint64
			want string
		}{
			{"socket", []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eperm},
			{"socket", []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET}, eperm},
			{"socket", []uint64{unix.AF_UNIX, 1<<32 | inner.ProxyChannelType}, eperm},
			{"socket", []uint64{unix.AF_UNIX, inner.ProxyChannelType}, map[bool]string{false: eperm, true: "SCMP_ACT_ALLOW"}[proxy]},
			{"socket", []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, eperm},
			{"socket", []uint64{unix.AF_INET, unix.SOCK_STREAM}, "SCMP_ACT_ALLOW"},
			{"ioctl", []uint64{0, unix.TIOCSTI}, eperm},
			{"clone", []uint64{unix.CLONE_NEWUSER}, eperm},
			{"clone", []uint64{uint64(unix.SIGCHLD)}, "SCMP_ACT_ALLOW"},
		} {
			if got := profileVerdict(t, prof, c.name, c.args...); got != c.want {
				t.Errorf("proxy=%v: %s%v gets %s, want %s", proxy, c.name, c.args, got, c.want)
			}
		}
		for _, c := range wideCalls {
			args := append([]uint64(nil), c.args...)
			args[c.arg] = c.low
			base := profileVerdict(t, prof, names[c.nr], args...)
			for _, hi := range highWords[1:] {
				args[c.arg] = hi<<32 | c.low
				if got := profileVerdict(t, prof, names[c.nr], args...); got != base {
					t.Errorf("proxy=%v: %s with high word %#x gets %s, without it %s", proxy, c.name, hi, got, base)
				}
			}
		}
	}
}
