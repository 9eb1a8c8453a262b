package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestLoopbackForward: a rule naming a host loopback port exactly (allow
// net 127.0.0.1:PORT) is reached by ordinary clients inside, which go
// around the proxy for loopback names (NO_PROXY): curl and Python's
// urllib get the host service's answer, over 127.0.0.1 and localhost; a
// host loopback port no rule names is not reached, and the command's
// output says why; the forwarded connection is recorded.
func TestLoopbackForward(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed")
	}
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host service says hi")
	}))
	t.Cleanup(host.Close)
	port := host.Listener.Addr().(*net.TCPAddr).Port
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "SECRET other host service")
	}))
	t.Cleanup(other.Close)
	otherPort := other.Listener.Addr().(*net.TCPAddr).Port
	// Containers: TestContainerLoopbackForward (the test image has no curl).
	for _, variant := range []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand} {
		t.Run(variant, func(t *testing.T) {
			backend, opts := testVariant(variant)
			requireBackend(t, backend)
			rec := &records{}
			px := &netproxy.Proxy{
				Decide: func(ctx context.Context, h string, p int) netproxy.ConnVerdict {
					if (h == "127.0.0.1" || h == "localhost") && p == port {
						return netproxy.ConnVerdict{Allowed: true, Exact: true, Rule: "allow net 127.0.0.1:" + strconv.Itoa(p)}
					}
					return netproxy.ConnVerdict{Reason: "no rule allows " + h}
				},
				Record:   rec.add,
				Loopback: []netproxy.LoopbackForward{{Host: "127.0.0.1", Port: port}},
			}
			base, err := os.MkdirTemp(outsideBase(), "harness-loopback-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			proj := filepath.Join(base, "proj")
			os.MkdirAll(proj, 0o755)
			p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: base})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(context.Background(), walls.NewLive(p), backend, append(opts, WithProxy(px))...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sb.Close() })
			run := func(script string) string {
				r, err := sb.Run(context.Background(), Cmd{Script: script, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return string(r.Output)
			}
			u := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
			if out := run("curl -sS " + u); !strings.Contains(out, "host service says hi") {
				t.Errorf("curl 127.0.0.1: %s", out)
			}
			if out := run("curl -sS http://localhost:" + strconv.Itoa(port) + "/"); !strings.Contains(out, "host service says hi") {
				t.Errorf("curl localhost: %s", out)
			}
			if _, err := exec.LookPath("python3"); err != nil {
				if testenv.Required(testenv.Python3) {
					t.Error("python3 is required here but not on PATH")
				}
			} else {
				if out := run("python3 -c 'import urllib.request; print(urllib.request.urlopen(\"" + u + "\").read().decode())'"); !strings.Contains(out, "host service says hi") {
					t.Errorf("python urllib: %s", out)
				}
			}
			out := run("curl -sS --max-time 5 http://127.0.0.1:" + strconv.Itoa(otherPort) + "/")
			if strings.Contains(out, "SECRET") {
				t.Errorf("a host loopback port no rule names was reached: %s", out)
			}
			if !strings.Contains(out, "localhost inside the sandbox is the sandbox's own loopback") || !strings.Contains(out, "forwarded now: "+strconv.Itoa(port)) {
				t.Errorf("a refused loopback connection is not explained:\n%s", out)
			}
			found := false
			rec.mu.Lock()
			all := append([]netproxy.ConnRecord(nil), rec.all...)
			rec.mu.Unlock()
			for _, r := range all {
				found = found || r.Method == "LOOPBACK" && r.Port == port && r.Verdict == "allowed"
			}
			if !found {
				t.Errorf("the forwarded connection was not recorded: %+v", all)
			}
		})
	}
}

// TestNoNet: a command run with NoNet (a language server) reaches no
// network even where the rules allow it: the allowed host loopback port a
// plain command reaches is refused to it.
func TestNoNet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("reached-host"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, variant := range []string{BackendBwrap, BackendLandlock} {
		t.Run(variant, func(t *testing.T) {
			backend, opts := testVariant(variant)
			requireBackend(t, backend)
			px := &netproxy.Proxy{
				Decide: func(ctx context.Context, h string, p int) netproxy.ConnVerdict {
					return netproxy.ConnVerdict{Allowed: p == port, Exact: true, Rule: "allow net 127.0.0.1:" + strconv.Itoa(p)}
				},
				Loopback: []netproxy.LoopbackForward{{Host: "127.0.0.1", Port: port}},
			}
			base, err := os.MkdirTemp(outsideBase(), "harness-nonet-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			proj := filepath.Join(base, "proj")
			os.MkdirAll(proj, 0o755)
			p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: base})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := Open(context.Background(), walls.NewLive(p), backend, append(opts, WithProxy(px))...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sb.Close() })
			script := "exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + " && head -c 20 <&3; echo'"
			run := func(noNet bool) string {
				r, err := sb.Run(context.Background(), Cmd{Script: script, Stdin: strings.NewReader(""), NoNet: noNet, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return string(r.Output)
			}
			if out := run(false); !strings.Contains(out, "reached-host") {
				t.Fatalf("without NoNet the allowed port was not reached (the test proves nothing): %s", out)
			}
			if out := run(true); strings.Contains(out, "reached-host") {
				t.Errorf("a NoNet command reached the network: %s", out)
			}
		})
	}
}
