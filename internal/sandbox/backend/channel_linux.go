package backend

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"golang.org/x/sys/unix"
)

// ProxyChannel is the host's end of the proxy's channel: a socketpair
// whose other end becomes the launcher's proxyFD.
func ProxyChannel() (local int, remote *os.File, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("creating the proxy's socket: %w", err)
	}
	return pair[0], os.NewFile(uintptr(pair[1]), "proxy channel"), nil
}

// ServeProxyChannel takes the connections a launcher or a container's
// init sends over fd and serves each through p, until the sender is gone.
func ServeProxyChannel(fd int, p *netproxy.Proxy) {
	defer unix.Close(fd)
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, err := inner.RecvFDs(fd, buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			return
		}
		port, forwarded := inner.ParseLoopbackMsg(buf[:n])
		for _, cfd := range inner.ParseRights(oob[:oobn]) {
			f := os.NewFile(uintptr(cfd), "proxied connection")
			c, err := net.FileConn(f)
			f.Close()
			if err != nil {
				continue
			}
			if forwarded {
				go p.ServeLoopback(context.Background(), c, port)
				continue
			}
			go p.Serve(context.Background(), c)
		}
	}
}
