package container

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// The network proxy in the container backend. The container has no
// network (--network none: its own namespace, loopback only), as the
// bwrap launcher's has none; its init listens on ProxyPort on that
// loopback and hands each connection it accepts, as a descriptor, to the
// host's proxy, over the same channel the launcher uses (sandbox/proxy_linux.go, backend.ServeProxyChannel).
// The channel is a unix socket on the host, bound into the container at
// containerProxySock, that the init connects to once it listens. Commands
// cannot use it themselves: the inner stage denies them every unix socket
// (and were one to slip past, the socket leads only to the proxy).

// containerReadyWait bounds the wait for a new container's init to listen
// on the proxy's port and connect its channel.
const containerReadyWait = 60 * time.Second

// containerNet is the host's end, one per session: each container the
// session starts (a new one when the carve-outs grow) connects anew.
type containerNet struct {
	sock  string
	ln    *net.UnixListener
	ready chan struct{} // an init connected
}

// listenContainerNet listens in dir, the session's engine directory
// (never mounted whole into a container).
func listenContainerNet(dir string, px *netproxy.Proxy) (*containerNet, error) {
	ln, err := listenIn(dir, "proxy.sock")
	if err != nil {
		return nil, fmt.Errorf("the network proxy's socket: %w", err)
	}
	cn := &containerNet{sock: filepath.Join(dir, "proxy.sock"), ln: ln, ready: make(chan struct{}, 1)}
	go cn.serve(px)
	return cn, nil
}

// listenIn listens on a unix seqpacket socket named name in dir, through
// the directory's descriptor: a socket's path is bound to 108 bytes, and
// a session's temporary directory (under TMPDIR) may be longer.
func listenIn(dir, name string) (*net.UnixListener, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), name), Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // that name is gone with d; the directory is removed whole
	return ln, nil
}

func (cn *containerNet) serve(px *netproxy.Proxy) {
	for {
		c, err := cn.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		f, err := c.File() // blocking, as ServeProxyChannel reads it
		c.Close()
		if err != nil {
			continue
		}
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			continue
		}
		select {
		case cn.ready <- struct{}{}:
		default:
		}
		go backend.ServeProxyChannel(fd, px)
	}
}

// armed forgets an earlier container's readiness, before a new one starts.
func (cn *containerNet) armed() {
	if cn == nil {
		return
	}
	select {
	case <-cn.ready:
	default:
	}
}

// waitReady returns once the container id's init connected its channel
// (it listens on ProxyPort by then), or why it did not.
func (cn *containerNet) waitReady(ctx context.Context, cli *client.Client, id string) error {
	if cn == nil {
		return nil
	}
	deadline := time.NewTimer(containerReadyWait)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-cn.ready:
			return nil
		case <-deadline.C:
			return fmt.Errorf("the container's init did not connect the network proxy within %s", containerReadyWait)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			in, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
			if st := in.Container.State; err == nil && st != nil && !st.Running {
				return fmt.Errorf("the container's init exited (%d) before the network proxy was up: %s", st.ExitCode, containerLog(ctx, cli, id))
			}
		}
	}
}

// containerLog is the end of a container's output, for an error.
func containerLog(ctx context.Context, cli *client.Client, id string) string {
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "5"})
	if err != nil {
		return err.Error()
	}
	defer rc.Close()
	var b bytes.Buffer
	stdcopy.StdCopy(&b, &b, io.LimitReader(rc, 8<<10))
	return strings.TrimSpace(b.String())
}

func (cn *containerNet) close() {
	if cn == nil {
		return
	}
	cn.ln.Close()
}
