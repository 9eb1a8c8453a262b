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
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestProxyInsideSandbox reaches a TLS origin on the host from inside the
// real sandbox, through the launcher's loopback port and the host's proxy,
// with a host-pattern rule; an unlisted host is refused and the command's
// output says how to allow it; every connection is recorded.
func TestProxyInsideSandbox(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed")
	}
	for _, backend := range proxyBackends {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			// A container gets the default image (no WithEnv(testEnv)):
			// the host's curl and python3.
			origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "origin says hi to %s", r.Host)
			}))
			defer origin.Close()
			port := origin.Listener.Addr().(*net.TCPAddr).Port
			rec := &records{}
			loop := netip.MustParseAddr("127.0.0.1")
			px := &Proxy{
				Decide: func(ctx context.Context, host string, _ int) ConnVerdict {
					if asker := AskedBy(ctx); !strings.Contains(asker, "curl -sS") && !strings.Contains(asker, "python3") {
						return ConnVerdict{Reason: "asked by " + asker + ", not the command that ran"}
					}
					if strings.HasSuffix(host, ".example.com") {
						return ConnVerdict{Allowed: true, Rule: "allow net *.example.com"}
					}
					return ConnVerdict{Reason: "no rule allows " + host + ": re-run with --allow-net " + host}
				},
				Record: rec.add,
				// The test's origin listens on the host's loopback; to the
				// proxy it stands for a public server (the refusal of
				// private addresses is TestProxy's).
				LookupIP: func(_ context.Context, h string) ([]netip.Addr, error) {
					return []netip.Addr{loop}, nil
				},
				Reachable: func(a netip.Addr) bool { return a == loop },
			}
			base, err := os.MkdirTemp(outsideBase(), "harness-proxy-test-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(base)
			proj := filepath.Join(base, "proj")
			os.MkdirAll(proj, 0o755)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw})
			os.WriteFile(filepath.Join(proj, "ca.pem"), ca, 0o644)
			p, err := NewPolicy(PolicyOptions{Project: proj, Home: base})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(context.Background(), p, backend, WithProxy(px))
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			r, err := sb.Run(context.Background(), Cmd{Script: fmt.Sprintf("curl -sS --max-time 20 --cacert ca.pem https://www.example.com:%d/x", port), Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != 0 || !strings.Contains(string(r.Output), fmt.Sprintf("origin says hi to www.example.com:%d", port)) {
				t.Fatalf("through the proxy: exit %d\n%s", r.ExitCode, r.Output)
			}
			got := rec.last(t)
			if got.Verdict != "allowed" || got.Host != "www.example.com" || got.Up == 0 || got.Down == 0 {
				t.Errorf("record %+v", got)
			}
			// The same through SOCKS5, as ALL_PROXY names it (socks5h: the
			// name goes to the proxy, which resolves it on the host).
			r, err = sb.Run(context.Background(), Cmd{Script: fmt.Sprintf(`case "$ALL_PROXY" in socks5h://127.0.0.1:*) ;; *) echo "ALL_PROXY=$ALL_PROXY"; exit 9;; esac
curl -sS --max-time 20 --cacert ca.pem -x "$ALL_PROXY" https://www.example.com:%d/s`, port), Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != 0 || !strings.Contains(string(r.Output), fmt.Sprintf("origin says hi to www.example.com:%d", port)) {
				t.Fatalf("through SOCKS5: exit %d\n%s", r.ExitCode, r.Output)
			}
			// An allowed tunnel is recorded when it closes, after the
			// command saw its end: wait for this one's record.
			if got := rec.lastWhere(t, func(c ConnRecord) bool { return c.Method == "SOCKS5" }); got.Verdict != "allowed" || got.Host != "www.example.com" || got.Up == 0 || got.Down == 0 {
				t.Errorf("record %+v", got)
			}
			r, _ = sb.Run(context.Background(), Cmd{Script: "curl -sS --max-time 20 -x \"$ALL_PROXY\" https://unlisted.test/", Timeout: 30 * time.Second})
			if r.ExitCode == 0 || !strings.Contains(string(r.Output), "[harness: network: refused SOCKS5 unlisted.test:443") || !strings.Contains(string(r.Output), "--allow-net unlisted.test") {
				t.Errorf("unlisted through SOCKS5: exit %d\n%s", r.ExitCode, r.Output)
			}
			// A tunnel for www.example.com whose TLS names another host.
			r, err = sb.Run(context.Background(), Cmd{Script: fmt.Sprintf(`/usr/bin/python3 -c '
import socket, ssl
s = socket.create_connection(("127.0.0.1", %d))
s.sendall(b"CONNECT www.example.com:%d HTTP/1.1\r\n\r\n")
print(s.recv(200).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
try:
    ctx.wrap_socket(s, server_hostname="other.test").sendall(b"GET / HTTP/1.0\r\n\r\n"); print("TLS-THROUGH")
except OSError as e:
    print("refused:", e)
'`, ProxyPort, port), Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if out := string(r.Output); strings.Contains(out, "TLS-THROUGH") || !strings.Contains(out, `the TLS server name "other.test" is not the host asked for`) {
				t.Errorf("SNI mismatch inside the sandbox:\n%s", out)
			}
			r, err = sb.Run(context.Background(), Cmd{Script: "curl -sS --max-time 20 https://unlisted.test/", Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode == 0 || !strings.Contains(string(r.Output), "[harness: network: refused CONNECT unlisted.test:443") || !strings.Contains(string(r.Output), "--allow-net unlisted.test") {
				t.Errorf("unlisted: exit %d\n%s", r.ExitCode, r.Output)
			}
			if backend == BackendLandlock && LandlockABI() >= 4 {
				// Landlock lets commands connect to the proxy's port only,
				// and bind none.
				r, _ = sb.Run(context.Background(), Cmd{Script: `/usr/bin/python3 -c '
import socket
for what, f in (("bind", lambda s: s.bind(("127.0.0.1", 0))), ("connect", lambda s: s.connect(("127.0.0.1", 3129)))):
    try:
        f(socket.socket()); print(what, "ok")
    except OSError as e:
        print(what, e.strerror)
'`})
				if out := string(r.Output); !strings.Contains(out, "bind Permission denied") || !strings.Contains(out, "connect Permission denied") {
					t.Errorf("landlock network rules:\n%s", out)
				}
			}
			// Without the proxy there is still no network: a direct
			// connection to the host's origin fails.
			r, _ = sb.Run(context.Background(), Cmd{Script: fmt.Sprintf("curl -sS --noproxy '*' --max-time 5 -k https://127.0.0.1:%d/ && echo DIRECT-REACHED", port), Timeout: 30 * time.Second})
			if strings.Contains(string(r.Output), "DIRECT-REACHED") {
				t.Errorf("a direct connection reached the host:\n%s", r.Output)
			}
		})
	}
}

var proxyBackends = []string{BackendBwrap, BackendLandlock, BackendDocker}

func TestProbeNetwork(t *testing.T) {
	for _, backend := range proxyBackends {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			var out strings.Builder
			n, err := ProbeNetwork(context.Background(), backend, &out)
			if err != nil || n != 0 {
				t.Errorf("%d failed, %v:\n%s", n, err, out.String())
			}
			t.Log(out.String())
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
		{name: "bwrap/per-command", backend: BackendBwrap, opts: []Option{WithLauncher(false)}},
		{name: "landlock/per-command", backend: BackendLandlock, opts: []Option{WithLauncher(false)}},
		{name: "landlock without user namespaces", backend: BackendLandlock, noUserns: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireBackend(t, tc.backend)
			if tc.noUserns {
				noUserNamespaces = true
				defer func() { noUserNamespaces = false }()
			}
			rec := &records{}
			px := &Proxy{Decide: func(context.Context, string, int) ConnVerdict {
				return ConnVerdict{Allowed: true, Exact: true, Rule: "allow net *"}
			}, Record: rec.add}
			base, err := os.MkdirTemp(outsideBase(), "harness-proxy-test-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(base)
			proj := filepath.Join(base, "proj")
			os.MkdirAll(proj, 0o755)
			p, err := NewPolicy(PolicyOptions{Project: proj, Home: base})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(context.Background(), p, tc.backend, append(tc.opts, WithProxy(px))...)
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
curl -sS --max-time 5 -x http://127.0.0.1:%d http://example.com/`, port, ProxyPort, ProxyPort, port, ProxyPort), Timeout: 60 * time.Second})
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
