package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// forwardLoopback runs inside the launcher (or a container's init), in
// the sandbox's network namespace: it listens on each forwarded port of
// the sandbox's loopback (IPv4, and IPv6 where the namespace has it) and
// sends each connection, tagged with its port, over fd to the host.
func forwardLoopback(fd int, ports []int) error {
	for _, port := range ports {
		lns, err := loopbackListen(port)
		if err != nil {
			return err
		}
		msg := loopbackMsg(port)
		for _, ln := range lns {
			go acceptEach(ln, func(c net.Conn) error {
				f, err := c.(*net.TCPConn).File()
				c.Close()
				if err != nil {
					return nil
				}
				defer f.Close()
				return sendAll(fd, msg, []int{int(f.Fd())})
			})
		}
	}
	return nil
}

func loopbackListen(port int) ([]net.Listener, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("listening on the sandbox's loopback port %d for the host's (allow net 127.0.0.1:%d): %w", port, port, err)
	}
	out := []net.Listener{ln}
	if ln6, err := net.Listen("tcp6", "[::1]:"+strconv.Itoa(port)); err == nil {
		out = append(out, ln6) // no IPv6 in the namespace: IPv4 alone
	}
	return out, nil
}

// loopbackMsg is the message that tags a forwarded connection: 'f' and
// the port, big-endian.
func loopbackMsg(port int) []byte {
	return binary.BigEndian.AppendUint16([]byte{'f'}, uint16(port))
}

// parseLoopbackMsg reads loopbackMsg.
func parseLoopbackMsg(b []byte) (int, bool) {
	if len(b) != 3 || b[0] != 'f' {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[1:])), true
}

// loopbackListenFDs makes the listening sockets of a sandbox of its own
// (the inner stage hands them to the host with the proxy's), as raw
// descriptors the inner stage closes before it execs.
func loopbackListenFDs(ports []int) (fds []int, tags []int, err error) {
	for _, port := range ports {
		for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
			fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				if fam == unix.AF_INET6 {
					continue
				}
				return fds, tags, err
			}
			var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
			if fam == unix.AF_INET6 {
				unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
				sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
			}
			if err := unix.Bind(fd, sa); err != nil {
				unix.Close(fd)
				if fam == unix.AF_INET6 {
					continue
				}
				return fds, tags, fmt.Errorf("listening on the sandbox's loopback port %d: %w", port, err)
			}
			if err := unix.Listen(fd, 128); err != nil {
				unix.Close(fd)
				return fds, tags, err
			}
			fds, tags = append(fds, fd), append(tags, port)
		}
	}
	return fds, tags, nil
}
