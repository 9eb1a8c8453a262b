package seatbelt

import (
	"fmt"
	"net"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// On macOS there is no network namespace to forward from: the proxy
// listens on a free port of the host's loopback, and the profile lets
// commands open TCP sockets and connect to that port on localhost only
// (the form sandbox-runtime's macOS profile uses for its proxy); nothing
// else on the network, no DNS (names are resolved by the proxy). Other
// processes of the machine can reach that port too; they get the same
// rules, and a connection they make is logged as the session's.

// seatbeltProxyRule is the profile text that adds that one way out. The
// port is a number, never a path, so it is part of the text.
func seatbeltProxyRule(port int) string {
	return fmt.Sprintf(`
; The network proxy (proxy.go) on the host's loopback: TCP sockets, and
; outbound to that one port of localhost.
(allow system-socket (require-all (socket-domain AF_INET) (socket-type SOCK_STREAM)))
(allow network-outbound (remote ip "localhost:%d"))
`, port)
}

// listenProxy serves px on a free port of the host's loopback until the
// listener is closed.
func listenProxy(px *netproxy.Proxy) (net.Listener, int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, fmt.Errorf("listening for the network proxy: %w", err)
	}
	go px.ServeListener(ln)
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}
