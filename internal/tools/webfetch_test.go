package tools

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// fetchNet is the world a web_fetch test sees: the real proxy, deciding
// through the real permission gate, with names resolved by a table and
// every dial sent to a loopback test server (so the proxy's address checks
// run on the addresses the names resolve to, not on 127.0.0.1).
type fetchNet struct {
	names  map[string]string // host -> address it resolves to
	target string            // loopback host:port every dial reaches

	mu     sync.Mutex
	dialed []string
	asked  []string
}

func (n *fetchNet) proxy(t *testing.T, gate *permission.Gate) *netproxy.Proxy {
	return &netproxy.Proxy{
		Decide: func(ctx context.Context, host string, port int) netproxy.ConnVerdict {
			v := gate.CheckNet(ctx, permission.NetRequest{Host: host, Port: port, Command: netproxy.AskedBy(ctx)})
			return netproxy.ConnVerdict{Allowed: v.Allowed, Exact: v.Exact, Rule: v.Rule, Reason: v.Reason}
		},
		LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			a, ok := n.names[host]
			if !ok {
				return nil, fmt.Errorf("no such host %s", host)
			}
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		},
		Dial: func(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
			n.mu.Lock()
			n.dialed = append(n.dialed, addr.Addr().String())
			n.mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", n.target)
		},
	}
}

// yesPrompter answers every question yes and remembers what it was asked.
type yesPrompter struct{ n *fetchNet }

func (p yesPrompter) Prompt(_ context.Context, req permission.Request, _ permission.Decision, _ string) (permission.Answer, error) {
	p.n.mu.Lock()
	p.n.asked = append(p.n.asked, req.Command)
	p.n.mu.Unlock()
	return permission.Answer{Choice: permission.Yes}, nil
}

func newFetchGate(t *testing.T, n *fetchNet, allowNet ...string) *permission.Gate {
	t.Helper()
	env, _ := newEnv(t)
	g, err := permission.New(permission.Options{Policy: env.Sandbox.Policy(), AllowNet: allowNet, Prompter: yesPrompter{n}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const page = `<!doctype html><html><head><title>Docs</title></head><body>
<h1>Getting started</h1><p>Install with <code>npm i widget</code>, then read <a href="/api">the API</a>.</p>
<ul><li>fast</li><li>small</li></ul></body></html>`

func fetch(t *testing.T, w *WebFetch, u string) Result {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"url": u})
	if _, err := w.Access(in); err != nil {
		t.Fatal(err)
	}
	return w.Run(context.Background(), in)
}

func TestWebFetchHTMLToMarkdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	n := &fetchNet{names: map[string]string{"docs.example.com": "93.184.215.14"}, target: srv.Listener.Addr().String()}
	w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n, "docs.example.com"))}
	res := fetch(t, w, "http://docs.example.com/start")
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	for _, want := range []string{"URL: http://docs.example.com/start\n", "Status: 200 OK\n", "# Getting started",
		"Install with `npm i widget`", "[the API](http://docs.example.com/api)", "- fast"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %q in:\n%s", want, res.Content)
		}
	}
	if strings.Contains(res.Content, "<h1>") {
		t.Errorf("HTML not converted:\n%s", res.Content)
	}
	if len(n.asked) != 0 {
		t.Errorf("an allowed host asked: %v", n.asked)
	}
	if len(n.dialed) != 1 || n.dialed[0] != "93.184.215.14" {
		t.Errorf("dialled %v, want the resolved public address", n.dialed)
	}
}

func TestWebFetchHTTPSAndUnlistedHostAsks(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello over TLS")
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	// httptest's certificate names example.com.
	n := &fetchNet{names: map[string]string{"example.com": "93.184.215.14"}, target: srv.Listener.Addr().String()}
	w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n)), TLS: &tls.Config{RootCAs: roots}}
	res := fetch(t, w, "https://example.com/")
	if res.IsError || !strings.Contains(res.Content, "hello over TLS") || !strings.Contains(res.Content, "Status: 200 OK") {
		t.Fatalf("got %+v", res)
	}
	if len(n.asked) != 1 || !strings.Contains(n.asked[0], "example.com:443") {
		t.Errorf("asked %q, want one question about example.com:443", n.asked)
	}
}

// TestWebFetchQuestionNamesIt: an unlisted host asks, and the question
// says web_fetch asked and for which URL, also while a background command
// (a dev server) is running, which would otherwise be named; each hop of a
// redirect asks under its own URL.
func TestWebFetchQuestionNamesIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "old.example.com" {
			http.Redirect(w, r, "http://new.example.org/moved?x=1", http.StatusMovedPermanently)
			return
		}
		fmt.Fprintf(w, "page at %s%s", r.Host, r.URL)
	}))
	defer srv.Close()
	n := &fetchNet{names: map[string]string{"old.example.com": "93.184.215.14", "new.example.org": "93.184.215.15"}, target: srv.Listener.Addr().String()}
	p := n.proxy(t, newFetchGate(t, n))
	defer p.Started("npm run dev")()
	w := &WebFetch{Proxy: p}
	res := fetch(t, w, "http://old.example.com/docs")
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	want := []string{
		"old.example.com:80  (asked by: web_fetch http://old.example.com/docs)",
		"new.example.org:80  (asked by: web_fetch http://new.example.org/moved?x=1)",
	}
	if fmt.Sprint(n.asked) != fmt.Sprint(want) {
		t.Errorf("asked:\n%q\nwant:\n%q", n.asked, want)
	}
	// The final URL and status are the last hop's, and the first is named.
	for _, line := range []string{"URL: http://new.example.org/moved?x=1\n", "Status: 200 OK\n", "Redirected from: http://old.example.com/docs\n", "page at new.example.org/moved?x=1"} {
		if !strings.Contains(res.Content, line) {
			t.Errorf("missing %q in:\n%s", line, res.Content)
		}
	}
	// A command's connection is still asked as the command's.
	n.asked = nil
	c, s := net.Pipe()
	go p.Serve(context.Background(), s)
	fmt.Fprintf(c, "GET http://other.example.com/ HTTP/1.1\r\nHost: other.example.com\r\n\r\n")
	go io.Copy(io.Discard, c)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n.mu.Lock()
		got := append([]string(nil), n.asked...)
		n.mu.Unlock()
		if len(got) > 0 {
			if got[0] != "other.example.com:80  (asked by: npm run dev)" {
				t.Errorf("a command's question: %q", got[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command's connection never asked")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
}

func TestWebFetchRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/go":
			http.Redirect(w, r, "http://metadata.internal/latest/meta-data/", http.StatusFound)
		case "/intranet":
			http.Redirect(w, r, "http://intranet.example.com/admin", http.StatusFound)
		case "/local":
			http.Redirect(w, r, "http://localhost:8080/", http.StatusTemporaryRedirect)
		default:
			fmt.Fprint(w, "secret instance credentials")
		}
	}))
	defer srv.Close()
	names := map[string]string{"site.example.com": "93.184.215.14", "metadata.internal": "169.254.169.254", "intranet.example.com": "10.1.2.3", "localhost": "127.0.0.1"}
	tests := []struct {
		name, url string
		allow     []string
		want      string
		dialed    []string
	}{
		{"redirect to a metadata address", "http://site.example.com/go", []string{"*"},
			"metadata.internal resolves to 169.254.169.254, a loopback, private, link-local or metadata address", []string{"93.184.215.14"}},
		{"redirect to a private address", "http://site.example.com/intranet", []string{"*"},
			"intranet.example.com resolves to 10.1.2.3, a loopback, private, link-local or metadata address", []string{"93.184.215.14"}},
		{"redirect to loopback", "http://site.example.com/local", []string{"*"},
			"localhost resolves to 127.0.0.1, a loopback, private, link-local or metadata address", []string{"93.184.215.14"}},
		{"private address of a pattern-allowed host", "http://intranet.example.com/", []string{"*.example.com"},
			"resolves to 10.1.2.3", nil},
		{"https to a private address", "https://intranet.example.com/", []string{"*.example.com"},
			"resolves to 10.1.2.3", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &fetchNet{names: names, target: srv.Listener.Addr().String()}
			w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n, tt.allow...))}
			res := fetch(t, w, tt.url)
			if !res.IsError || !strings.Contains(res.Content, "refused by harness") || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("want a refusal naming %q, got %+v", tt.want, res)
			}
			if strings.Contains(res.Content, "secret") {
				t.Fatalf("the private page leaked: %s", res.Content)
			}
			if fmt.Sprint(n.dialed) != fmt.Sprint(tt.dialed) {
				t.Errorf("dialled %v, want %v", n.dialed, tt.dialed)
			}
		})
	}
}

func TestWebFetchExactRuleReachesPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "intranet page") }))
	defer srv.Close()
	n := &fetchNet{names: map[string]string{"intranet.example.com": "10.1.2.3"}, target: srv.Listener.Addr().String()}
	w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n, "intranet.example.com:80"))}
	if res := fetch(t, w, "http://intranet.example.com/"); res.IsError || !strings.Contains(res.Content, "intranet page") {
		t.Fatalf("an exact rule did not reach the private address: %+v", res)
	}
}

func TestWebFetchLargePageCappedAndSpilled(t *testing.T) {
	const size = maxHTMLConvert - 64<<10 // converted whole
	var sb strings.Builder
	sb.WriteString("<html><body><h1>Big</h1>")
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "<p>paragraph %d of a long page</p>\n", i)
	}
	sb.WriteString("<p>THE END</p></body></html>")
	big := sb.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, big)
	}))
	defer srv.Close()
	n := &fetchNet{names: map[string]string{"big.example.com": "93.184.215.14"}, target: srv.Listener.Addr().String()}
	w := &WebFetch{Proxy: n.proxy(t, newFetchGate(t, n, "big.example.com"))}
	res := fetch(t, w, "http://big.example.com/")
	if res.IsError {
		t.Fatalf("error: %.500s", res.Content)
	}
	// The registry's answer goes through layer 1 like every tool result.
	spill := t.TempDir()
	h := history.New(history.Config{Cap: 10000, SpillDir: spill})
	b := llm.Block{Type: llm.BlockToolResult, ToolUseID: "f1", Content: res.Content}
	if err := h.Cap(&b); err != nil {
		t.Fatal(err)
	}
	if len(b.Content) > 12000 || !strings.Contains(b.Content, "harness cap") {
		t.Fatalf("not capped: %d chars", len(b.Content))
	}
	if !strings.HasPrefix(b.Content, "URL: http://big.example.com/") || !strings.Contains(b.Content, "THE END") {
		t.Errorf("head or tail lost:\n%.300s", b.Content)
	}
	files, _ := filepath.Glob(filepath.Join(spill, "spill-*.txt"))
	if len(files) != 1 {
		t.Fatalf("spill files: %v", files)
	}
	whole, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if string(whole) != res.Content || !strings.Contains(string(whole), "paragraph 50000 of a long page") {
		t.Errorf("the spill file does not hold the whole page (%d bytes)", len(whole))
	}
}

func TestWebFetchBadURL(t *testing.T) {
	w := &WebFetch{}
	for _, u := range []string{"file:///etc/passwd", "ftp://x/", "http://", "https://user:pw@example.com/"} {
		in, _ := json.Marshal(map[string]any{"url": u})
		if _, err := w.Access(in); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "app.localhost": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "0.0.0.0": true, "::": true, "10.0.0.1": false, "example.com": false,
		"localhost.example.com": false, "169.254.169.254": false, "::ffff:127.0.0.1": true,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
