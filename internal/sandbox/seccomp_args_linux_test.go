package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"golang.org/x/sys/unix"
)

// The kernel hands a filter every system call argument as a full 64-bit
// register, but socket(2)'s family and type and ioctl(2)'s request are
// C ints the kernel truncates to their low 32 bits (clone's flags too:
// kernel/fork.c takes lower_32_bits). A filter that compares the whole
// register is fooled by socket(1<<32|AF_UNIX, …), which the kernel runs as
// socket(AF_UNIX, …). These tests run both filters, the inner stage's BPF
// program and the container engine's profile, over crafted arguments: a
// value with any high word must get the verdict of its low word.

// highWords are the high words the tests set on an argument.
var highWords = []uint64{0, 1, 0x80000000, 0xffffffff}

// seccompData lays out struct seccomp_data as the kernel does, in the
// machine's byte order: nr, arch, instruction pointer, six arguments.
func seccompData(nr, arch uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.NativeEndian.PutUint32(b[0:], nr)
	binary.NativeEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// runBPF interprets the classic BPF instructions a seccomp filter may
// use and that seccompProgram emits (loads of a word of seccomp_data,
// jumps on a constant, returns); any other instruction fails the test.
func runBPF(t *testing.T, prog []inner.Bpf, data []byte) uint32 {
	t.Helper()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || int(in.K)+4 > len(data) {
				t.Fatalf("instruction %d loads offset %d of seccomp_data", pc, in.K)
			}
			a = binary.NativeEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				taken = a == in.K
			case unix.BPF_JGE:
				taken = a >= in.K
			case unix.BPF_JGT:
				taken = a > in.K
			case unix.BPF_JSET:
				taken = a&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: opcode %#x is not interpreted here", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end (the kernel refuses such a filter)")
	return 0
}

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

// TestSeccompArgumentsLowWord runs the inner stage's filter, in each of
// its forms, over every call of wideCalls with each high word.
func TestSeccompArgumentsLowWord(t *testing.T) {
	if inner.AuditArch == 0 {
		t.Skip("no seccomp filter for this architecture")
	}
	for _, o := range []inner.FilterOptions{{}, {DenyAllSockets: true}, {DenyMeta: true}} {
		prog := inner.SeccompProgram(o)
		verdict := func(nr uint32, args ...uint64) uint32 {
			return runBPF(t, prog, seccompData(nr, inner.AuditArch, args...))
		}
		// What each low word gets: the families denied are.
		for _, c := range []struct {
			nr   uint32
			args []uint64
			want uint32
		}{
			{unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, inner.RetEPERM},
			{unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, inner.RetEPERM},
			{unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, inner.RetEPERM},
			{unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER}, inner.RetEPERM},
			{unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, inner.RetAllow},
			{unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, inner.RetAllow},
		} {
			if got := verdict(c.nr, c.args...); got != c.want {
				t.Errorf("%+v: call %d%v gets %#x, want %#x", o, c.nr, c.args, got, c.want)
			}
		}
		inet := verdict(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM)
		if want := map[bool]uint32{false: inner.RetAllow, true: inner.RetEPERM}[o.DenyAllSockets]; inet != want {
			t.Errorf("%+v: socket(AF_INET) gets %#x, want %#x", o, inet, want)
		}
		for _, c := range wideCalls {
			args := append([]uint64(nil), c.args...)
			args[c.arg] = c.low
			base := verdict(c.nr, args...)
			for _, hi := range highWords[1:] {
				args[c.arg] = hi<<32 | c.low
				if got := verdict(c.nr, args...); got != base {
					t.Errorf("%+v: %s with high word %#x gets %#x, without it %#x", o, c.name, hi, got, base)
				}
			}
		}
		// Other ABIs cannot reach the kernel under numbers the filter
		// does not check: another architecture dies, and so do x32 calls.
		for _, arch := range []uint32{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM} {
			if arch == inner.AuditArch {
				continue
			}
			if got := runBPF(t, prog, seccompData(unix.SYS_SOCKET, arch, unix.AF_UNIX)); got != inner.RetKill {
				t.Errorf("%+v: socket(AF_UNIX) of arch %#x gets %#x, want the kill", o, arch, got)
			}
		}
		if runtime.GOARCH == "amd64" {
			if got := verdict(0x40000000|unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM); got != inner.RetKill {
				t.Errorf("%+v: x32 socket(AF_UNIX) gets %#x, want the kill", o, got)
			}
		}
	}
}
