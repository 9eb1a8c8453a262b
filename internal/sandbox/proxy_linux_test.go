package sandbox

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/testenv"
)

// publicOrigin stands, to the proxy in these tests, for a public
// server's address: the world's Dial takes it to the test's origin on
// the host's loopback, and refuses (recording it) any other address, so
// a check that let a private address through shows as a dial to it.
var publicOrigin = netip.MustParseAddr("93.184.215.14")

// proxyWorld is a sandbox of one variant with a proxy in front of a TLS
// origin on the host: www.example.com resolves to publicOrigin and is
// allowed by a pattern rule, as is any *.test name; names maps further
// names to what the host's resolver answers (a func answers each lookup
// anew: a rebinding name).
type proxyWorld struct {
	sb      Sandbox
	px      *netproxy.Proxy
	rec     *records
	port    int // the origin's, on the host's loopback
	mu      sync.Mutex
	dialled []netip.AddrPort
	lookups map[string]int
}

func newProxyWorld(t *testing.T, variant string, names map[string]func(n int) []netip.Addr) *proxyWorld {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed")
	}
	backend, opts := testVariant(variant)
	requireBackend(t, backend)
	if IsContainer(backend) {
		opts = nil // no WithEnv(testEnv): the default image, with the host's curl and python3
	}
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin says hi to %s", r.Host)
	}))
	t.Cleanup(origin.Close)
	w := &proxyWorld{rec: &records{}, port: origin.Listener.Addr().(*net.TCPAddr).Port, lookups: map[string]int{}}
	w.px = &netproxy.Proxy{
		Decide: func(ctx context.Context, host string, _ int) netproxy.ConnVerdict {
			if asker := netproxy.AskedBy(ctx); !strings.Contains(asker, "curl -sS") && !strings.Contains(asker, "python3") {
				return netproxy.ConnVerdict{Reason: "asked by " + asker + ", not the command that ran"}
			}
			switch {
			case strings.HasSuffix(host, ".example.com"):
				return netproxy.ConnVerdict{Allowed: true, Rule: "allow net *.example.com"}
			case strings.HasSuffix(host, ".test") && host != "unlisted.test":
				return netproxy.ConnVerdict{Allowed: true, Rule: "allow net *.test"}
			}
			return netproxy.ConnVerdict{Reason: "no rule allows " + host + ": re-run with --allow-net " + host}
		},
		Record: w.rec.add,
		LookupIP: func(_ context.Context, h string) ([]netip.Addr, error) {
			w.mu.Lock()
			n := w.lookups[h]
			w.lookups[h]++
			w.mu.Unlock()
			if h == "www.example.com" {
				return []netip.Addr{publicOrigin}, nil
			}
			if f, ok := names[h]; ok {
				return f(n), nil
			}
			return nil, fmt.Errorf("no such host %s", h)
		},
		Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			w.mu.Lock()
			w.dialled = append(w.dialled, ap)
			w.mu.Unlock()
			if ap.Addr() != publicOrigin {
				return nil, fmt.Errorf("test: no dial to %s", ap)
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", ap.Port()))
		},
	}
	base, err := os.MkdirTemp(outsideBase(), "harness-proxy-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw})
	os.WriteFile(filepath.Join(proj, "ca.pem"), ca, 0o644)
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: base})
	if err != nil {
		t.Fatal(err)
	}
	if w.sb, err = Open(context.Background(), walls.NewLive(p), backend, append(opts, WithProxy(w.px))...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.sb.Close() })
	return w
}

// run runs script in the world's sandbox.
func (w *proxyWorld) run(t *testing.T, script string) *Result {
	t.Helper()
	r, err := w.sb.Run(context.Background(), Cmd{Script: script, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dials lists the addresses the proxy dialled.
func (w *proxyWorld) dials() []netip.AddrPort {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]netip.AddrPort(nil), w.dialled...)
}

// TestProxyInsideSandbox reaches a TLS origin on the host from inside the
// real sandbox, through the launcher's loopback port and the host's proxy
// or, without the launcher, through the port each sandbox's own inner
// stage hands over, with a host-pattern rule; an unlisted host is refused
// and the command's output says how to allow it; every connection is
// recorded; nothing but the proxy's port leads out.
func TestProxyInsideSandbox(t *testing.T) {
	testenv.Slow(t)
	for _, variant := range proxyVariants {
		t.Run(variant, func(t *testing.T) {
			backend, _ := testVariant(variant)
			w := newProxyWorld(t, variant, nil)
			rec, port := w.rec, w.port
			mark := rec.count()
			r := w.run(t, fmt.Sprintf("curl -sS --max-time 20 --cacert ca.pem https://www.example.com:%d/x", port))
			if r.ExitCode != 0 || !strings.Contains(string(r.Output), fmt.Sprintf("origin says hi to www.example.com:%d", port)) {
				t.Fatalf("through the proxy: exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := rec.await(t, mark, nil); got.Verdict != "allowed" || got.Method != "CONNECT" || got.Host != "www.example.com" || got.Up == 0 || got.Down == 0 || got.Addr != netip.AddrPortFrom(publicOrigin, uint16(port)).String() {
				t.Errorf("record %+v", got)
			}
			// The same through SOCKS5, as ALL_PROXY names it (socks5h: the
			// name goes to the proxy, which resolves it on the host).
			mark = rec.count()
			r = w.run(t, fmt.Sprintf(`case "$ALL_PROXY" in socks5h://127.0.0.1:*) ;; *) echo "ALL_PROXY=$ALL_PROXY"; exit 9;; esac
curl -sS --max-time 20 --cacert ca.pem -x "$ALL_PROXY" https://www.example.com:%d/s`, port))
			if r.ExitCode != 0 || !strings.Contains(string(r.Output), fmt.Sprintf("origin says hi to www.example.com:%d", port)) {
				t.Fatalf("through SOCKS5: exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := rec.await(t, mark, nil); got.Method != "SOCKS5" || got.Verdict != "allowed" || got.Host != "www.example.com" || got.Up == 0 || got.Down == 0 {
				t.Errorf("record %+v", got)
			}
			mark = rec.count()
			r = w.run(t, "curl -sS --max-time 20 -x \"$ALL_PROXY\" https://unlisted.test/")
			if r.ExitCode == 0 || !strings.Contains(string(r.Output), "[harness: network: refused SOCKS5 unlisted.test:443") || !strings.Contains(string(r.Output), "--allow-net unlisted.test") {
				t.Errorf("unlisted through SOCKS5: exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := rec.await(t, mark, nil); got.Verdict != "refused" || got.Host != "unlisted.test" || got.Addr != "" {
				t.Errorf("record %+v", got)
			}
			// A tunnel for www.example.com whose TLS names another host.
			mark = rec.count()
			r = w.run(t, fmt.Sprintf(`/usr/bin/python3 -c '
import socket, ssl
s = socket.create_connection(("127.0.0.1", %d))
s.sendall(b"CONNECT www.example.com:%d HTTP/1.1\r\n\r\n")
print(s.recv(200).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
try:
    ctx.wrap_socket(s, server_hostname="other.test").sendall(b"GET / HTTP/1.0\r\n\r\n"); print("TLS-THROUGH")
except OSError as e:
    print("refused:", e)
'`, netproxy.ProxyPort, port))
			if out := string(r.Output); strings.Contains(out, "TLS-THROUGH") || !strings.Contains(out, `the TLS server name "other.test" is not the host asked for`) {
				t.Errorf("SNI mismatch inside the sandbox:\n%s", out)
			}
			if got := rec.await(t, mark, nil); got.Verdict != "refused" || got.Addr != "" || got.Down != 0 {
				t.Errorf("record %+v", got)
			}
			mark = rec.count()
			r = w.run(t, "curl -sS --max-time 20 https://unlisted.test/")
			if r.ExitCode == 0 || !strings.Contains(string(r.Output), "[harness: network: refused CONNECT unlisted.test:443") || !strings.Contains(string(r.Output), "--allow-net unlisted.test") {
				t.Errorf("unlisted: exit %d\n%s", r.ExitCode, r.Output)
			}
			if got := rec.await(t, mark, nil); got.Verdict != "refused" || got.Host != "unlisted.test" {
				t.Errorf("record %+v", got)
			}
			if backend == BackendLandlock {
				// In its own network namespace the namespace is the wall, as
				// with bwrap: a command binds and connects on the sandbox's
				// loopback (a dev server answers later commands), a port
				// nothing listens on there is refused, and no other address
				// leads anywhere.
				r = w.run(t, fmt.Sprintf(`/usr/bin/python3 -c '
import socket
for what, f in (("bind", lambda s: s.bind(("127.0.0.1", 0))), ("connect", lambda s: s.connect(("127.0.0.1", %d))), ("out", lambda s: s.connect(("192.0.2.1", 80)))):
    try:
        f(socket.socket()); print(what, "ok")
    except OSError as e:
        print(what, e.strerror)
'`, netproxy.ProxyPort+1))
				if out := string(r.Output); !strings.Contains(out, "bind ok") || !strings.Contains(out, "connect Connection refused") || !strings.Contains(out, "out Network is unreachable") {
					t.Errorf("landlock's network namespace:\n%s", out)
				}
			}
			// A command cannot take the proxy's port over (its socket is
			// held by the launcher or, per command, by the host), and holds
			// no socket of the channel to the host.
			if !IsContainer(backend) {
				r = w.run(t, fmt.Sprintf(`/usr/bin/python3 -c '
import socket
for host in ("127.0.0.1", "0.0.0.0"):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        s.bind((host, %d)); s.listen(); print("TOOK", host)
    except OSError as e:
        print("bind", host, e.strerror)
'
for f in /proc/$$/fd/*; do readlink "$f"; done | grep -c socket: || true`, netproxy.ProxyPort))
				if out := string(r.Output); strings.Contains(out, "TOOK") || strings.Count(out, "bind ") != 2 || !strings.HasSuffix(strings.TrimSpace(out), "\n0") {
					t.Errorf("the proxy's port taken over, or a socket held:\n%s", out)
				}
			}
			// Nothing else leads out: a direct connection to a listener on
			// the host's loopback fails, by curl and by a bare socket
			// (IPv4 and IPv6), and no dial but the origin's was made.
			ln6, err := net.Listen("tcp6", "[::1]:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln6.Close()
			r = w.run(t, fmt.Sprintf(`curl -sS --noproxy '*' --max-time 5 -k https://127.0.0.1:%d/ && echo DIRECT-REACHED
/usr/bin/python3 -c '
import socket
for fam, addr in ((socket.AF_INET, ("127.0.0.1", %d)), (socket.AF_INET6, ("::1", %d))):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5); s.connect(addr); print("DIRECT-REACHED", addr)
    except OSError as e:
        print("refused", addr, e.strerror)
'`, port, port, ln6.Addr().(*net.TCPAddr).Port))
			if out := string(r.Output); strings.Contains(out, "DIRECT-REACHED") || strings.Count(out, "refused (") != 2 {
				t.Errorf("a direct connection reached the host, or the probe did not run:\n%s", out)
			}
			for _, d := range w.dials() {
				if d.Addr() != publicOrigin {
					t.Errorf("the proxy dialled %s", d)
				}
			}
		})
	}
}

// TestProxyRefusesPrivateInside: from inside the real sandbox, a name
// the host resolves to a private, link-local (cloud metadata) or unique
// local address is refused though a pattern rule allows the name, as is
// one that resolves to loopback; a name that answers a public address
// first and loopback after (DNS rebinding) is dialled at the address
// checked, and a mixed answer only at its public address. The dial seam
// sees every address the proxy dialled: none but the public one.
func TestProxyRefusesPrivateInside(t *testing.T) {
	testenv.Slow(t)
	one := func(a string) func(int) []netip.Addr {
		return func(int) []netip.Addr { return []netip.Addr{netip.MustParseAddr(a)} }
	}
	names := map[string]func(int) []netip.Addr{
		"private.test":  one("10.1.2.3"),
		"metadata.test": one("169.254.169.254"),
		"ula.test":      one("fd00:ec2::254"),
		"loopback.test": one("127.0.0.1"),
		"mapped.test":   one("::ffff:192.168.1.1"),
		// Public at the first lookup, loopback at every later one.
		"rebind.test": func(n int) []netip.Addr {
			if n == 0 {
				return []netip.Addr{publicOrigin}
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		},
		"mixed.test": func(int) []netip.Addr {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.0.0.1"), publicOrigin}
		},
	}
	for _, variant := range proxyVariants {
		t.Run(variant, func(t *testing.T) {
			w := newProxyWorld(t, variant, names)
			for _, host := range []string{"private.test", "metadata.test", "ula.test", "loopback.test", "mapped.test"} {
				for _, how := range []string{"", `-x "$ALL_PROXY"`} {
					mark := w.rec.count()
					r := w.run(t, fmt.Sprintf("curl -sS --max-time 20 -k %s https://%s:%d/ && echo REACHED", how, host, w.port))
					if out := string(r.Output); strings.Contains(out, "REACHED") || !strings.Contains(out, "a loopback, private, link-local or metadata address") {
						t.Errorf("%s %s: exit %d\n%s", host, how, r.ExitCode, out)
					}
					if got := w.rec.await(t, mark, nil); got.Verdict != "refused" || got.Host != host || got.Addr != "" || got.Rule != "allow net *.test" {
						t.Errorf("%s %s: record %+v", host, how, got)
					}
				}
			}
			for _, host := range []string{"rebind.test", "mixed.test"} {
				mark := w.rec.count()
				r := w.run(t, fmt.Sprintf("curl -sS --max-time 20 -k https://%s:%d/", host, w.port))
				// The origin's certificate names example.com, not these: curl
				// -k passes it, the SNI the proxy checks is the host asked for.
				if r.ExitCode != 0 || !strings.Contains(string(r.Output), "origin says hi to "+host) {
					t.Errorf("%s: exit %d\n%s", host, r.ExitCode, r.Output)
				}
				if got := w.rec.await(t, mark, nil); got.Verdict != "allowed" || got.Addr != netip.AddrPortFrom(publicOrigin, uint16(w.port)).String() {
					t.Errorf("%s: record %+v", host, got)
				}
			}
			w.mu.Lock()
			n := w.lookups["rebind.test"]
			w.mu.Unlock()
			if n != 1 {
				t.Errorf("rebind.test was looked up %d times for one connection", n)
			}
			for _, d := range w.dials() {
				if d.Addr() != publicOrigin {
					t.Errorf("the proxy dialled %s", d)
				}
			}
		})
	}
}

// TestProxyAfterLauncherFails: when the launcher cannot start, each
// command gets a sandbox of its own, and the network with it.
func TestProxyAfterLauncherFails(t *testing.T) {
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			w := newProxyWorld(t, backend, nil)
			l := w.sb.(*instance).launch.(*launcher)
			l.mu.Lock()
			l.newCmd = func(*walls.Policy) *exec.Cmd { return exec.Command("/bin/false") }
			lp := l.cur // started by Open's self-check: stopped, it is not restarted
			l.mu.Unlock()
			if lp != nil {
				killTree(lp.cmd.Process, l.tree)
				<-lp.done
			}
			mark := w.rec.count()
			r := w.run(t, fmt.Sprintf("curl -sS --max-time 20 --cacert ca.pem https://www.example.com:%d/f", w.port))
			out := string(r.Output)
			if !strings.Contains(out, "running each command in a sandbox of its own from now on") {
				t.Errorf("the launcher did not fail as arranged:\n%s", out)
			}
			if r.ExitCode != 0 || !strings.Contains(out, "origin says hi to www.example.com") {
				t.Fatalf("through the proxy after the launcher failed: exit %d\n%s", r.ExitCode, out)
			}
			if got := w.rec.await(t, mark, nil); got.Verdict != "allowed" || got.Host != "www.example.com" || got.Down == 0 {
				t.Errorf("record %+v", got)
			}
		})
	}
}

// proxyVariants are the ways a command reaches the proxy: through the
// session's launcher, and from a sandbox of its own (the fallback when
// the launcher cannot start, and HARNESS_SANDBOX_LAUNCHER=0).
var proxyVariants = []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand, BackendDocker}

func TestProbeNetwork(t *testing.T) {
	testenv.Slow(t)
	for _, variant := range proxyVariants {
		t.Run(variant, func(t *testing.T) {
			backend, opts := testVariant(variant)
			requireBackend(t, backend)
			var out strings.Builder
			n, err := ProbeNetwork(context.Background(), backend, &out, opts...)
			if err != nil || n != 0 || !strings.Contains(out.String(), "each connection recorded") {
				t.Errorf("%d failed, %v:\n%s", n, err, out.String())
			}
			t.Log(out.String())
		})
	}
}

// TestProbeNetworkUnprivileged runs the network probe as nobody (uid
// 65534), through the launcher and from a sandbox per command: a loopback
// origin on the host reached through the proxy, an unlisted host refused,
// no direct connection to the host, each connection recorded.
func TestProbeNetworkUnprivileged(t *testing.T) {
	testenv.Slow(t)
	setpriv, bin := testenv.NobodyBinary(t, outsideBase(), "TestProbeNetwork")
	for _, variant := range proxyVariants {
		t.Run(variant, func(t *testing.T) {
			backend, _ := testVariant(variant)
			if IsContainer(backend) {
				t.Skip("the engine's socket is root's: TestProbeNetwork covers the container as root")
			}
			requireBackend(t, backend)
			out, err := testenv.AsNobody(setpriv, bin, nil, netProbeEnv+"="+variant).CombinedOutput()
			t.Logf("as nobody:\n%s", out)
			if err != nil || !strings.Contains(string(out), "ok       each connection recorded") {
				t.Errorf("the network probe as nobody failed: %v", err)
			}
		})
	}
}

// TestProxyNotOfferedWithoutNetns: where a backend has no network
// namespace of its own to forward the proxy's port in (a sandbox per
// command; the landlock backend without user namespaces, where Landlock's
// port rules would reach that port on any host), the proxy is not offered
// and there is still no way out: no proxy variables naming a dead port, no
// socket, no direct connection to a server on the host, nothing reaching
// the proxy.
func TestProxyNotOfferedWithoutNetns(t *testing.T) {
	testenv.Slow(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "DIRECT-REACHED")
	}))
	defer origin.Close()
	port := origin.Listener.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name, backend string
		opts          []Option
		noUserns      bool
	}{
		{name: "landlock without user namespaces", backend: BackendLandlock, noUserns: true},
		{name: "landlock without user namespaces/per-command", backend: BackendLandlock, opts: []Option{WithLauncher(false)}, noUserns: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireBackend(t, tc.backend)
			if tc.noUserns {
				noUserNamespaces = true
				defer func() { noUserNamespaces = false }()
			}
			rec := &records{}
			px := &netproxy.Proxy{Decide: func(context.Context, string, int) netproxy.ConnVerdict {
				return netproxy.ConnVerdict{Allowed: true, Exact: true, Rule: "allow net *"}
			}, Record: rec.add}
			base, err := os.MkdirTemp(outsideBase(), "harness-proxy-test-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(base)
			proj := filepath.Join(base, "proj")
			os.MkdirAll(proj, 0o755)
			p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: base})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(context.Background(), walls.NewLive(p), tc.backend, append(tc.opts, WithProxy(px))...)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			r, err := sb.Run(context.Background(), Cmd{Script: fmt.Sprintf(`env | grep -i _proxy= || echo no-proxy-vars
/usr/bin/python3 -c '
import socket
for fam, addr in ((socket.AF_INET, ("127.0.0.1", %d)), (socket.AF_INET, ("127.0.0.1", %d)), (socket.AF_INET6, ("::1", %d))):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5); s.connect(addr); print("CONNECTED", addr)
    except OSError as e:
        print("refused", addr, e.strerror)
'
curl -sS --max-time 5 http://127.0.0.1:%d/
curl -sS --max-time 5 -x http://127.0.0.1:%d http://example.com/`, port, netproxy.ProxyPort, netproxy.ProxyPort, port, netproxy.ProxyPort), Timeout: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			out := string(r.Output)
			t.Log(out)
			if !strings.Contains(out, "no-proxy-vars") || strings.Contains(out, "CONNECTED") || strings.Contains(out, "DIRECT-REACHED") || strings.Count(out, "refused (") != 3 {
				t.Errorf("a way out, or proxy variables for a proxy not offered:\n%s", out)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.all) != 0 {
				t.Errorf("the proxy was reached: %+v", rec.all)
			}
		})
	}
}
