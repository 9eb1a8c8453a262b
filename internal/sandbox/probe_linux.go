package sandbox

import (
	"fmt"
	"net"
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
