package inner

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// proxyFD is where the launcher finds the socket it hands proxy
// connections to the host over (its control socket is ctrlFD).
const proxyFD = 4

// forwardProxy runs inside the launcher: it listens on port on the
// sandbox's own loopback and sends each connection it accepts, as a
// descriptor, to the host. Commands reach the proxy this way without a
// network, and without a unix socket they could open themselves.
func forwardProxy(port int) error { return forwardProxyTo(proxyFD, port) }

// forwardProxyTo is forwardProxy handing connections over fd (the
// container backend's init, whose channel is a socket it connects to).
func forwardProxyTo(fd, port int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("listening for the network proxy inside the sandbox: %w", err)
	}
	go acceptEach(ln, func(c net.Conn) error {
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			return nil
		}
		defer f.Close()
		return sendAll(fd, []byte("c"), []int{int(f.Fd())}) // fails once the host is gone
	})
	return nil
}

// handOverListener runs in the inner stage of a sandbox of its own, in
// the sandbox's network namespace, before the walls go up: it listens on
// port on loopback and sends the listening socket itself to the host,
// which accepts every connection on it from then on. Nothing inside keeps
// it (the inner stage execs the command next, and the socket is
// close-on-exec), so there is no forwarding process for a command to
// reach, and no port it could take over: the port stays bound.
//
// The listeners of the loopback forwards (loopback.go) go with it, in
// the same message: "l" and, for each, its port (two bytes, big-endian).
func handOverListener(port int, forwards []int) error {
	defer unix.Close(ownProxyFD)
	if err := loopbackUp(); err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listening for the network proxy inside the sandbox: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("listening for the network proxy inside the sandbox: %w", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("listening for the network proxy inside the sandbox: %w", err)
	}
	fws, tags, err := loopbackListenFDs(forwards)
	defer func() {
		for _, f := range fws {
			unix.Close(f)
		}
	}()
	if err != nil {
		return err
	}
	msg := []byte("l")
	for _, t := range tags {
		msg = binary.BigEndian.AppendUint16(msg, uint16(t))
	}
	if err := sendAll(ownProxyFD, msg, append([]int{fd}, fws...)); err != nil {
		return fmt.Errorf("handing the proxy's socket to the host: %w", err)
	}
	return nil
}

// loopbackUp brings lo up in a fresh network namespace (which needs
// CAP_NET_ADMIN there: the landlock backend's launcher or inner stage,
// before it drops its capabilities). bwrap does the same for its own, so
// an interface already up is left as it is.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing up loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up loopback: %w", err)
	}
	if ifr.Uint16()&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up loopback: %w", err)
	}
	return nil
}

// maxLoopbackFDs bounds the forward listeners one message carries (two a
// port: IPv4 and IPv6).
const MaxLoopbackFDs = 64

// serveContainerProxy, in the container's init, listens on port and on
// each of forward (the host loopback ports the rules allow) on the
// container's loopback and connects the channel to the host; the host
// lets commands run only once it is connected, so none can reach a port
// before the init listens there.
func serveContainerProxy(port string, forward []string) error {
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("bad proxy port %q", port)
	}
	fw := make([]int, 0, len(forward))
	for _, s := range forward {
		p, err := strconv.Atoi(s)
		if err != nil || p <= 0 || p > 65535 || p == n {
			return fmt.Errorf("bad loopback forward port %q", s)
		}
		fw = append(fw, p)
	}
	// The engine's profile (containerSeccompProfile) allows this one kind
	// of unix socket when the proxy is offered; the inner stage none.
	fd, err := unix.Socket(unix.AF_UNIX, ProxyChannelType, 0)
	if err != nil {
		return fmt.Errorf("the proxy channel's socket: %w", err)
	}
	if err := forwardProxyTo(fd, n); err != nil {
		return err
	}
	if err := forwardLoopback(fd, fw); err != nil {
		return err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: ContainerProxySock}); err != nil {
		return fmt.Errorf("connecting the proxy channel to the host: %w", err)
	}
	return nil
}

// containerProxySock is where the host's end of the proxy channel is
// mounted in the container.
const ContainerProxySock = "/.harness/proxy.sock"

// ownProxyFD is where the inner stage of a sandbox of its own (a command
// run without the launcher) finds the socket it hands its listening
// socket to the host over.
const ownProxyFD = 3

// proxyChannelType is the socket type of the container's proxy channel.
const ProxyChannelType = unix.SOCK_SEQPACKET | unix.SOCK_CLOEXEC

// acceptEach hands every connection ln accepts to handle, until ln is
// closed or handle fails (netproxy.AcceptEach's twin: this package imports
// nothing of the host side).
func acceptEach(ln net.Listener, handle func(net.Conn) error) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		if handle(c) != nil {
			return
		}
	}
}
