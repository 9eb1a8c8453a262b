package sandbox

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"golang.org/x/sys/unix"
)

// proxyFor is the proxy a sandbox of its own reaches: the session's, or
// with noNet one that refuses every connection (Cmd.NoNet).
func proxyFor(p *netproxy.Proxy, noNet bool) *netproxy.Proxy {
	if !noNet {
		return p
	}
	return &netproxy.Proxy{Decide: func(context.Context, string, int) netproxy.ConnVerdict {
		return netproxy.ConnVerdict{Reason: "this process gets no network (a language server)"}
	}}
}

// ownProxy readies cmd, a sandbox of its own, to reach p: it adds the
// channel handOverListener sends the listening socket over (as
// ownProxyFD, so cmd must have no other extra file) and serves every
// connection on that socket until stop, called once cmd is over.
func ownProxy(p *netproxy.Proxy, cmd *exec.Cmd) (stop func(), err error) {
	local, remote, err := backend.ProxyChannel()
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
		buf := make([]byte, 2+2*inner.MaxLoopbackFDs)
		oob := make([]byte, unix.CmsgSpace(4*(1+inner.MaxLoopbackFDs)))
		n, oobn, err := inner.RecvFDs(local, buf, oob)
		if err != nil {
			return
		}
		fds := inner.ParseRights(oob[:oobn])
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
					p.ServeListener(l)
					return
				}
				netproxy.AcceptEach(l, func(c net.Conn) error {
					go p.ServeLoopback(context.Background(), c, port)
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
