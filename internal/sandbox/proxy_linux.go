package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
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
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					continue
				}
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			err = sendAll(fd, []byte("c"), []int{int(f.Fd())})
			f.Close()
			if err != nil {
				return // the host is gone
			}
		}
	}()
	return nil
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
		for _, cfd := range parseRights(oob[:oobn]) {
			f := os.NewFile(uintptr(cfd), "proxied connection")
			c, err := net.FileConn(f)
			f.Close()
			if err != nil {
				continue
			}
			go p.Serve(context.Background(), c)
		}
	}
}

// loopbackUp brings lo up in a fresh network namespace (which needs
// CAP_NET_ADMIN there: the landlock backend's launcher, before it drops
// its capabilities). bwrap does the same for its own.
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
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up loopback: %w", err)
	}
	return nil
}
