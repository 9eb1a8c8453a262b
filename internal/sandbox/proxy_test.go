package sandbox

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// proxyFixture serves p on a loopback listener (standing in for the
// launcher's forwarding) and returns its URL.
func proxyFixture(t *testing.T, p *Proxy) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.Serve(context.Background(), c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// records collects a proxy's records.
type records struct {
	mu  sync.Mutex
	all []ConnRecord
}

func (r *records) add(c ConnRecord) { r.mu.Lock(); r.all = append(r.all, c); r.mu.Unlock() }
func (r *records) last(t *testing.T) ConnRecord {
	t.Helper()
	for i := 0; i < 200; i++ { // Serve records after the client sees the end
		r.mu.Lock()
		n := len(r.all)
		var c ConnRecord
		if n > 0 {
			c = r.all[n-1]
		}
		r.mu.Unlock()
		if n > 0 {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no connection recorded")
	return ConnRecord{}
}

// netTable is a Decide from a table: host:port → verdict.
func netTable(m map[string]ConnVerdict) func(context.Context, string, int) ConnVerdict {
	return func(_ context.Context, host string, port int) ConnVerdict {
		if v, ok := m[net.JoinHostPort(host, fmt.Sprint(port))]; ok {
			return v
		}
		if v, ok := m[host]; ok {
			return v
		}
		return ConnVerdict{Reason: "no rule allows " + host + "; re-run with --allow-net " + host}
	}
}

func TestProxy(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	defer origin.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s %s", r.Host, r.URL.Path)
	}))
	defer plain.Close()
	oport := origin.Listener.Addr().(*net.TCPAddr).Port
	pport := plain.Listener.Addr().(*net.TCPAddr).Port
	loop := netip.MustParseAddr("127.0.0.1")
	names := map[string][]netip.Addr{
		"example.com": {loop}, "www.example.com": {loop}, "rebind.test": {loop},
		"private.test": {netip.MustParseAddr("10.0.0.7")}, "meta.test": {netip.MustParseAddr("169.254.169.254")},
	}
	rec := &records{}
	// Reachable stands in for "127.0.0.1 is a public origin" where a case
	// needs a reachable origin through a pattern rule; the cases about
	// private addresses use PublicAddr.
	mk := func(reach func(netip.Addr) bool, m map[string]ConnVerdict) string {
		rec = &records{}
		return proxyFixture(t, &Proxy{
			Decide: netTable(m), Record: rec.add, Reachable: reach,
			LookupIP: func(_ context.Context, h string) ([]netip.Addr, error) {
				if a, ok := names[h]; ok {
					return a, nil
				}
				return nil, fmt.Errorf("no such host %s", h)
			},
		})
	}
	allowLoop := func(a netip.Addr) bool { return a == loop || PublicAddr(a) }
	pattern := ConnVerdict{Allowed: true, Rule: "allow net *.example.com"}
	client := func(proxyURL, serverName string) *http.Client {
		u, _ := url.Parse(proxyURL)
		cfg := &tls.Config{RootCAs: origin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: serverName}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: cfg, DisableKeepAlives: true}}
	}
	get := func(c *http.Client, u string) (string, error) {
		resp, err := c.Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return string(b), fmt.Errorf("status %d", resp.StatusCode)
		}
		return string(b), nil
	}

	t.Run("CONNECT allowed by a host pattern", func(t *testing.T) {
		px := mk(allowLoop, map[string]ConnVerdict{"www.example.com": pattern})
		body, err := get(client(px, ""), fmt.Sprintf("https://www.example.com:%d/x", oport))
		if err != nil || body != fmt.Sprintf("hello from www.example.com:%d", oport) {
			t.Fatalf("%q %v", body, err)
		}
		r := rec.last(t)
		if r.Verdict != "allowed" || r.Method != "CONNECT" || r.Host != "www.example.com" || r.Port != oport || r.Up == 0 || r.Down == 0 || r.Addr != fmt.Sprintf("127.0.0.1:%d", oport) {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("plain HTTP in absolute form", func(t *testing.T) {
		px := mk(allowLoop, map[string]ConnVerdict{"www.example.com": pattern})
		body, err := get(client(px, ""), fmt.Sprintf("http://www.example.com:%d/p", pport))
		if err != nil || body != fmt.Sprintf("plain www.example.com:%d /p", pport) {
			t.Fatalf("%q %v", body, err)
		}
		if r := rec.last(t); r.Verdict != "allowed" || r.Method != "GET" || r.Down == 0 {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("unlisted host refused with the flag to allow it", func(t *testing.T) {
		px := mk(allowLoop, nil)
		conn, err := net.Dial("tcp", strings.TrimPrefix(px, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT www.example.com:%d HTTP/1.1\r\nHost: www.example.com\r\n\r\n", oport)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 403 || !strings.Contains(string(b), "--allow-net www.example.com") {
			t.Errorf("%d %q", resp.StatusCode, b)
		}
		if r := rec.last(t); r.Verdict != "refused" || r.Host != "www.example.com" || r.Addr != "" {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("a name resolving to loopback is refused", func(t *testing.T) {
		px := mk(nil, map[string]ConnVerdict{"rebind.test": {Allowed: true, Rule: "allow net *.test"}})
		if _, err := get(client(px, "rebind.test"), fmt.Sprintf("https://rebind.test:%d/", oport)); err == nil {
			t.Fatal("reached a loopback origin through a pattern rule")
		}
		if r := rec.last(t); r.Verdict != "refused" || !strings.Contains(r.Reason, "loopback, private") || r.Addr != "" {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("private and metadata addresses refused", func(t *testing.T) {
		all := ConnVerdict{Allowed: true, Rule: "allow net *"}
		px := mk(nil, map[string]ConnVerdict{"private.test": all, "meta.test": all, "10.0.0.7": all})
		for _, u := range []string{"http://private.test/", "http://meta.test/latest/meta-data/", "http://10.0.0.7/"} {
			if _, err := get(client(px, ""), u); err == nil {
				t.Errorf("%s: reached", u)
			}
			if r := rec.last(t); r.Verdict != "refused" || r.Addr != "" {
				t.Errorf("%s: record %+v", u, r)
			}
		}
	})
	t.Run("an exact rule reaches a private address", func(t *testing.T) {
		px := mk(nil, map[string]ConnVerdict{fmt.Sprintf("example.com:%d", oport): {Allowed: true, Exact: true, Rule: fmt.Sprintf("allow net example.com:%d", oport)}})
		if body, err := get(client(px, ""), fmt.Sprintf("https://example.com:%d/", oport)); err != nil {
			t.Fatalf("%q %v", body, err)
		}
	})
	t.Run("SNI mismatch refused", func(t *testing.T) {
		px := mk(allowLoop, map[string]ConnVerdict{"www.example.com": pattern})
		// The tunnel is for www.example.com; the TLS inside names another
		// host (domain fronting, or a tunnel to something else).
		u, _ := url.Parse(px)
		c := client(px, "other.test")
		c.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
		c.Transport.(*http.Transport).Proxy = http.ProxyURL(u)
		if _, err := get(c, fmt.Sprintf("https://www.example.com:%d/", oport)); err == nil {
			t.Fatal("an SNI mismatch went through")
		}
		if r := rec.last(t); r.Verdict != "refused" || !strings.Contains(r.Reason, `"other.test"`) || r.Down != 0 || r.Addr != "" {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("a tunnel that is not TLS needs an exact rule", func(t *testing.T) {
		px := mk(allowLoop, map[string]ConnVerdict{"www.example.com": pattern})
		conn, err := net.Dial("tcp", strings.TrimPrefix(px, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT www.example.com:%d HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n", pport)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if rest, _ := io.ReadAll(br); len(rest) != 0 {
			t.Errorf("plain bytes came through: %q", rest)
		}
		if r := rec.last(t); r.Verdict != "refused" || !strings.Contains(r.Reason, "TLS ClientHello") {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("a huge request head is refused", func(t *testing.T) {
		px := mk(allowLoop, map[string]ConnVerdict{"www.example.com": pattern})
		conn, err := net.Dial("tcp", strings.TrimPrefix(px, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			fmt.Fprintf(conn, "CONNECT www.example.com:%d HTTP/1.1\r\nX-Big: ", oport)
			chunk := []byte(strings.Repeat("a", 1<<16))
			for i := 0; i < 64; i++ { // 4 MiB of one header line
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 400 {
			t.Fatalf("%v %v", resp, err)
		}
		if r := rec.last(t); r.Verdict != "refused" || !strings.Contains(r.Reason, "64 KiB") {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("bounded connections", func(t *testing.T) {
		blocker := make(chan struct{})
		p := &Proxy{Decide: func(context.Context, string, int) ConnVerdict { <-blocker; return ConnVerdict{} }, MaxConns: 1}
		addr := strings.TrimPrefix(proxyFixture(t, p), "http://")
		hold, _ := net.Dial("tcp", addr)
		defer hold.Close()
		fmt.Fprintf(hold, "CONNECT a.test:443 HTTP/1.1\r\n\r\n")
		time.Sleep(100 * time.Millisecond)
		second, _ := net.Dial("tcp", addr)
		defer second.Close()
		fmt.Fprintf(second, "CONNECT b.test:443 HTTP/1.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(second), nil)
		close(blocker)
		if err != nil || resp.StatusCode != 503 {
			t.Errorf("second connection: %v %v", resp, err)
		}
	})
}

func TestPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		a    string
		want bool
	}{
		{"93.184.216.34", true}, {"2606:2800:220:1::248", true},
		{"127.0.0.1", false}, {"127.1.2.3", false}, {"::1", false}, {"10.1.1.1", false},
		{"172.16.0.1", false}, {"192.168.1.1", false}, {"169.254.169.254", false},
		{"100.100.100.200", false}, {"0.0.0.0", false}, {"::", false}, {"fd00:ec2::254", false},
		{"fe80::1", false}, {"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false},
		{"64:ff9b::7f00:1", false}, {"2002:7f00:1::", false}, {"224.0.0.1", false},
		{"255.255.255.255", false}, {"198.18.0.1", false},
	} {
		if got := PublicAddr(netip.MustParseAddr(tc.a)); got != tc.want {
			t.Errorf("PublicAddr(%s) = %v", tc.a, got)
		}
	}
}

func FuzzParseSNI(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) { parseSNI(b) })
}
