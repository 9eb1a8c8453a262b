package inner

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runProbe performs one attempted escape from inside the sandbox for the
// escape battery: it prints "ESCAPED" and exits 0 when the kernel let the
// attempt through, prints "denied: …" and exits 2 otherwise.
func runProbe(args []string) int {
	if len(args) < 1 {
		fmt.Println("denied: no probe named")
		return 2
	}
	var err error
	switch args[0] {
	case "fds":
		return probeFDs()
	case "supervisors":
		return probeSupervisors(len(args) > 1 && args[1] == "kill")
	case "connect-unix", "connect-tcp":
		if len(args) < 2 {
			err = fmt.Errorf("no address")
			break
		}
		network, addr := "unix", args[1]
		if args[0] == "connect-tcp" {
			network = "tcp"
		}
		var c net.Conn
		if c, err = net.Dial(network, addr); err == nil {
			c.Write([]byte("escaped\n"))
			c.Close()
		}
	case "connect-unix-wide":
		// connect-unix through a socket whose family has its high word
		// set: the kernel reads an int and makes it AF_UNIX, so a filter
		// comparing the register's 64 bits would let it through.
		if len(args) < 2 {
			err = fmt.Errorf("no address")
			break
		}
		err = connectUnixWide(args[1])
	case "tiocsti":
		if len(args) < 2 {
			err = fmt.Errorf("no device")
			break
		}
		var fd int
		if fd, err = unix.Open(args[1], unix.O_RDWR|unix.O_NOCTTY, 0); err == nil {
			err = tiocsti(fd)
		}
	case "tiocsti-pty":
		err = tiocstiOwnPty()
	case "meta":
		// meta PATH: change PATH's mode, times and extended attributes,
		// by path and through a descriptor opened for reading.
		if len(args) < 2 {
			err = fmt.Errorf("meta PATH")
			break
		}
		return probeMeta(args[1])
	case "flip":
		return probeFlip(args[1:])
	case "zombie-leader":
		err = fmt.Errorf("zombie-leader runs from init, on the main thread")
	case "hold":
		return probeHold(args[1:])
	default:
		err = fmt.Errorf("unknown probe %q", args[0])
	}
	if err != nil {
		fmt.Printf("denied: %v\n", err)
		return 2
	}
	fmt.Println("ESCAPED")
	return 0
}

// probeFDs: what did this program inherit? The Go runtime's own
// descriptors are all close-on-exec; one without the flag came through
// exec.
func probeFDs() int {
	var open []int
	for fd := 3; fd < 1024; fd++ {
		if fl, e := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); e == nil && fl&unix.FD_CLOEXEC == 0 {
			open = append(open, fd)
		}
	}
	if len(open) > 0 {
		fmt.Printf("ESCAPED: inherited descriptors %v\n", open)
		return 0
	}
	fmt.Println("denied: nothing beyond stdin, stdout and stderr")
	return 2
}

// probeFlip: flip A B SECONDS swaps two names with
// renameat2(RENAME_EXCHANGE) as fast as possible, racing the host-side
// file tools.
func probeFlip(args []string) int {
	if len(args) < 3 {
		fmt.Println("denied: flip A B SECONDS")
		return 2
	}
	secs, _ := strconv.Atoi(args[2])
	end := time.Now().Add(time.Duration(secs) * time.Second)
	n := 0
	for time.Now().Before(end) {
		if e := unix.Renameat2(unix.AT_FDCWD, args[0], unix.AT_FDCWD, args[1], unix.RENAME_EXCHANGE); e != nil {
			fmt.Printf("denied: %v after %d swaps\n", e, n)
			return 2
		}
		n++
	}
	fmt.Printf("swapped %d times\n", n)
	return 0
}

// probeHold: hold MiB SECONDS takes MiB of memory, every page touched,
// and keeps it SECONDS: a memory bound per command must stop several of
// these at once even where each is under the bound.
func probeHold(args []string) int {
	if len(args) != 2 {
		fmt.Println("denied: hold wants MiB and seconds")
		return 2
	}
	mib, _ := strconv.Atoi(args[0])
	secs, _ := strconv.Atoi(args[1])
	held := make([][]byte, 0, mib/16+1)
	for i := 0; i < mib; i += 16 {
		b := make([]byte, 16<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
	}
	fmt.Printf("held %d MiB\n", len(held)*16)
	time.Sleep(time.Duration(secs) * time.Second)
	runtime.KeepAlive(held)
	return 0
}

// wideUnix is AF_UNIX with a high word (the constant would not fit a
// 32-bit uintptr; there the filter sees no high word anyway).
var wideUnix = uint64(1)<<32 | unix.AF_UNIX

func connectUnixWide(addr string) error {
	fd, _, e := unix.Syscall(unix.SYS_SOCKET, uintptr(wideUnix), unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if e != 0 {
		return fmt.Errorf("socket(1<<32|AF_UNIX): %w", e)
	}
	defer unix.Close(int(fd))
	if err := unix.Connect(int(fd), &unix.SockaddrUnix{Name: addr}); err != nil {
		return fmt.Errorf("a unix socket, but connect: %w", err)
	}
	_, err := unix.Write(int(fd), []byte("escaped\n"))
	return err
}

func tiocsti(fd int) error {
	c := byte('X')
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); e != 0 {
		return e
	}
	return nil
}

// tiocstiOwnPty opens a fresh pty pair and pushes a byte into it: seccomp
// must deny the request itself, not only access to the user's terminal.
func tiocstiOwnPty() error {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(m)
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return err
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		return err
	}
	s, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	return tiocsti(s)
}

// probeSupervisors tries to reach the session's launcher and supervisors
// (same uid, same PID namespace): ptrace them, read their memory,
// descriptors or environment, and with kill, SIGKILL them. It prints what
// worked, and "checked N" for the number of such processes it found.
func probeSupervisors(kill bool) int {
	ents, _ := os.ReadDir("/proc")
	n, escaped := 0, false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(cmdline), "\x00")
		if len(args) < 2 || (args[1] != LauncherArg && args[1] != SupervisorArg) {
			continue
		}
		n++
		say := func(what string) {
			fmt.Printf("ESCAPED: %s of %s (pid %d)\n", what, args[1], pid)
			escaped = true
		}
		if kill {
			if unix.Kill(pid, unix.SIGKILL) == nil {
				say("SIGKILL")
			}
			continue
		}
		if f, err := os.Open("/proc/" + e.Name() + "/mem"); err == nil {
			f.Close()
			say("opened /proc/<pid>/mem")
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && len(b) > 0 {
			say("read /proc/<pid>/environ")
		}
		// Listing the numbers is allowed to the owner; following one is
		// what needs ptrace access.
		fds, _ := os.ReadDir("/proc/" + e.Name() + "/fd")
		for _, fd := range fds {
			p := "/proc/" + e.Name() + "/fd/" + fd.Name()
			if _, err := os.Readlink(p); err == nil {
				say("readlink " + p)
				break
			}
			if f, err := os.Open(p); err == nil {
				f.Close()
				say("opened " + p)
				break
			}
		}
		if err := unix.PtraceSeize(pid); err == nil {
			unix.PtraceDetach(pid)
			say("ptrace")
		}
	}
	fmt.Printf("checked %d\n", n)
	if escaped {
		return 0
	}
	return 2
}

// zombieLeader ends its main thread only, with the raw exit(2) of one
// thread, while another thread runs on: the process then shows as a
// zombie (state Z) in /proc/<pid>/stat yet keeps running, which a kill
// scan that skips zombies misses. It never returns.
func zombieLeader() {
	go func() {
		runtime.LockOSThread() // a thread of its own, not the main one
		for {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0) // this thread only
}

// init runs on the main thread (the runtime locks it there for init), the
// one zombieLeader must end; nothing else happens in init.
func init() {
	if len(os.Args) > 2 && os.Args[1] == ProbeArg && os.Args[2] == "zombie-leader" {
		zombieLeader()
	}
}

// probeMeta tries every form of the metadata changes Landlock does not
// mediate on path; it reports each that the kernel let through.
func probeMeta(path string) int {
	var won []string
	try := func(name string, err error) {
		if err == nil {
			won = append(won, name)
		}
	}
	old := []unix.Timespec{{Sec: 1}, {Sec: 1}}
	try("chmod", unix.Fchmodat(unix.AT_FDCWD, path, 0o777, 0))
	try("utimensat", unix.UtimesNanoAt(unix.AT_FDCWD, path, old, 0))
	try("setxattr", unix.Setxattr(path, "user.harness", []byte("x"), 0))
	try("lsetxattr", unix.Lsetxattr(path, "user.harness", []byte("x"), 0))
	if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		try("fchmod", unix.Fchmod(fd, 0o777))
		try("futimens", unix.UtimesNanoAt(fd, "", old, unix.AT_EMPTY_PATH))
		try("fsetxattr", unix.Fsetxattr(fd, "user.harness", []byte("x"), 0))
		unix.Close(fd)
	}
	if len(won) > 0 {
		fmt.Printf("ESCAPED: %s changed %s\n", strings.Join(won, ", "), path)
		return 0
	}
	fmt.Println("denied: no mode, time or xattr change")
	return 2
}
