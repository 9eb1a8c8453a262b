package sandbox

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// proxyFD is where the launcher finds the socket it hands proxy
// connections to the host over (its control socket is ctrlFD).
const proxyFD = 4

// ownProxyFD is where the inner stage of a sandbox of its own (a command
// run without the launcher) finds the socket it hands its listening
// socket to the host over.
const ownProxyFD = 3

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

// maxLoopbackFDs bounds the forward listeners one message carries (two a
// port: IPv4 and IPv6).
const maxLoopbackFDs = 64

// ownProxy readies cmd, a sandbox of its own, to reach p: it adds the
// channel handOverListener sends the listening socket over (as
// ownProxyFD, so cmd must have no other extra file) and serves every
// connection on that socket until stop, called once cmd is over.
func ownProxy(p *Proxy, cmd *exec.Cmd) (stop func(), err error) {
	local, remote, err := proxyChannel()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, remote)
	var (
		mu      sync.Mutex
		lns     []net.Listener
		stopped bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2+2*maxLoopbackFDs)
		oob := make([]byte, unix.CmsgSpace(4*(1+maxLoopbackFDs)))
		n, oobn, err := recvFDs(local, buf, oob)
		if err != nil {
			return
		}
		fds := parseRights(oob[:oobn])
		if len(fds) == 0 {
			return
		}
		var ports []int // of fds[1:]
		for b := buf[1:n]; len(b) >= 2; b = b[2:] {
			ports = append(ports, int(binary.BigEndian.Uint16(b)))
		}
		var listeners []net.Listener
		var forwards []int
		for i, fd := range fds {
			if i > 0 && i-1 >= len(ports) {
				unix.Close(fd)
				continue
			}
			f := os.NewFile(uintptr(fd), "proxy listener")
			l, err := net.FileListener(f)
			f.Close()
			if err != nil {
				continue
			}
			listeners = append(listeners, l)
			if i == 0 {
				forwards = append(forwards, 0)
			} else {
				forwards = append(forwards, ports[i-1])
			}
		}
		mu.Lock()
		if stopped {
			mu.Unlock()
			for _, l := range listeners {
				l.Close()
			}
			return
		}
		lns = listeners
		mu.Unlock()
		var wg sync.WaitGroup
		for i, l := range listeners {
			wg.Add(1)
			go func(l net.Listener, port int) {
				defer wg.Done()
				if port == 0 {
					p.serveListener(l)
					return
				}
				acceptEach(l, func(c net.Conn) error {
					go p.serveLoopback(context.Background(), c, port)
					return nil
				})
			}(l, forwards[i])
		}
		wg.Wait()
	}()
	return func() {
		remote.Close()
		unix.Shutdown(local, unix.SHUT_RDWR) // ends a receive still waiting
		mu.Lock()
		stopped = true
		for _, l := range lns {
			l.Close()
		}
		mu.Unlock()
		<-done
		unix.Close(local)
	}, nil
}

// proxyChannel is the host's end: a socketpair whose other end becomes the
// launcher's proxyFD.
func proxyChannel() (local int, remote *os.File, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("creating the proxy's socket: %w", err)
	}
	return pair[0], os.NewFile(uintptr(pair[1]), "proxy channel"), nil
}

// serveProxyChannel takes the connections the launcher sends over fd and
// serves each through p, until the launcher is gone.
func serveProxyChannel(fd int, p *Proxy) {
	defer unix.Close(fd)
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, err := recvFDs(fd, buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		port, forwarded := parseLoopbackMsg(buf[:n])
		for _, cfd := range parseRights(oob[:oobn]) {
			f := os.NewFile(uintptr(cfd), "proxied connection")
			c, err := net.FileConn(f)
			f.Close()
			if err != nil {
				continue
			}
			if forwarded {
				go p.serveLoopback(context.Background(), c, port)
				continue
			}
			go p.Serve(context.Background(), c)
		}
	}
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
