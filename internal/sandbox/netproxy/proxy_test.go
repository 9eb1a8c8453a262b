package netproxy

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
	go p.ServeListener(ln)
	return "http://" + ln.Addr().String()
}

// records collects a proxy's records.
type records struct {
	mu  sync.Mutex
	all []ConnRecord
}

func (r *records) add(c ConnRecord) { r.mu.Lock(); r.all = append(r.all, c); r.mu.Unlock() }

// await returns the first record from the from-th on that satisfies ok
// (nil: any), waiting for it: Serve records a connection once it is
// over, which may be after the client saw its end. It fails the test
// when none comes.
func (r *records) await(t *testing.T, from int, ok func(ConnRecord) bool) ConnRecord {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r.mu.Lock()
		for _, c := range r.all[min(from, len(r.all)):] {
			if ok == nil || ok(c) {
				r.mu.Unlock()
				return c
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no connection recorded (from the %d-th on) as awaited", from)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
		r := rec.await(t, 0, nil)
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
		if r := rec.await(t, 0, nil); r.Verdict != "allowed" || r.Method != "GET" || r.Down == 0 {
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
		if r := rec.await(t, 0, nil); r.Verdict != "refused" || r.Host != "www.example.com" || r.Addr != "" {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("a name resolving to loopback is refused", func(t *testing.T) {
		px := mk(nil, map[string]ConnVerdict{"rebind.test": {Allowed: true, Rule: "allow net *.test"}})
		if _, err := get(client(px, "rebind.test"), fmt.Sprintf("https://rebind.test:%d/", oport)); err == nil {
			t.Fatal("reached a loopback origin through a pattern rule")
		}
		if r := rec.await(t, 0, nil); r.Verdict != "refused" || !strings.Contains(r.Reason, "loopback, private") || r.Addr != "" {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("private and metadata addresses refused", func(t *testing.T) {
		all := ConnVerdict{Allowed: true, Rule: "allow net *"}
		px := mk(nil, map[string]ConnVerdict{"private.test": all, "meta.test": all, "10.0.0.7": all})
		for i, u := range []string{"http://private.test/", "http://meta.test/latest/meta-data/", "http://10.0.0.7/"} {
			if _, err := get(client(px, ""), u); err == nil {
				t.Errorf("%s: reached", u)
			}
			if r := rec.await(t, i, nil); r.Verdict != "refused" || r.Addr != "" {
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
		if r := rec.await(t, 0, nil); r.Verdict != "refused" || !strings.Contains(r.Reason, `"other.test"`) || r.Down != 0 || r.Addr != "" {
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
		if r := rec.await(t, 0, nil); r.Verdict != "refused" || !strings.Contains(r.Reason, "TLS ClientHello") {
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
		if r := rec.await(t, 0, nil); r.Verdict != "refused" || !strings.Contains(r.Reason, "64 KiB") {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("bounded connections", func(t *testing.T) {
		// The first connection holds its slot inside Decide (it waits for a
		// user's answer); entered says so, with no sleep to guess it.
		blocker, entered := make(chan struct{}), make(chan struct{}, 4)
		wait := func(ch chan struct{}, what string) {
			select {
			case <-ch:
			case <-time.After(2 * time.Minute):
				t.Fatalf("no sign of %s", what)
			}
		}
		p := &Proxy{Decide: func(context.Context, string, int) ConnVerdict {
			entered <- struct{}{}
			<-blocker
			return ConnVerdict{Reason: "no"}
		}, MaxConns: 1}
		addr := strings.TrimPrefix(proxyFixture(t, p), "http://")
		hold, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer hold.Close()
		fmt.Fprintf(hold, "CONNECT a.test:443 HTTP/1.1\r\n\r\n")
		wait(entered, "the first connection in Decide")
		for _, hello := range []string{"CONNECT b.test:443 HTTP/1.1\r\n\r\n", "\x05\x01\x00\x05\x01\x00\x03\x06b.test\x01\xbb"} {
			second, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			second.SetDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(second, hello)
			br := bufio.NewReader(second)
			if hello[0] == socksVersion {
				var b [12]byte // method choice, then the reply
				if _, err := io.ReadFull(br, b[:]); err != nil || b[3] != socksFailure {
					t.Errorf("second SOCKS5 connection: % x %v", b, err)
				}
			} else if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 503 {
				t.Errorf("second connection: %v %v", resp, err)
			}
			second.Close()
		}
		close(blocker)
		hbr := bufio.NewReader(hold)
		resp, err := http.ReadResponse(hbr, nil)
		if err != nil || resp.StatusCode != 403 {
			t.Errorf("first connection: %v %v", resp, err)
		}
		// The slot is free again once the first is over: Serve releases
		// it before it closes the connection (a refusal is recorded, and
		// answered, before either), so the end of the stream says so.
		hold.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if _, err := io.ReadAll(hbr); err != nil {
			t.Fatalf("the first connection was not closed: %v", err)
		}
		third, _ := net.Dial("tcp", addr)
		defer third.Close()
		fmt.Fprintf(third, "CONNECT c.test:443 HTTP/1.1\r\n\r\n")
		wait(entered, "the third connection in Decide")
		if resp, err := http.ReadResponse(bufio.NewReader(third), nil); err != nil || resp.StatusCode != 403 {
			t.Errorf("after the first ended: %v %v", resp, err)
		}
	})
	t.Run("an idle tunnel is closed", func(t *testing.T) {
		// An origin that accepts and then says nothing, with a client that
		// says nothing either: the proxy ends the tunnel after IdleTimeout.
		quiet, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer quiet.Close()
		held := make(chan net.Conn, 1)
		go func() {
			if c, err := quiet.Accept(); err == nil {
				held <- c
			}
		}()
		qport := quiet.Addr().(*net.TCPAddr).Port
		rec = &records{}
		hp := fmt.Sprintf("db.test:%d", qport)
		px := proxyFixture(t, &Proxy{
			Decide: netTable(map[string]ConnVerdict{hp: {Allowed: true, Exact: true, Rule: "allow net " + hp}}), Record: rec.add,
			LookupIP:    func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{loop}, nil },
			IdleTimeout: 300 * time.Millisecond,
		})
		conn, err := net.Dial("tcp", strings.TrimPrefix(px, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n\r\nping", hp)
		br := bufio.NewReader(conn)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		up := <-held
		defer up.Close()
		// Far longer than the idle timeout, so a loaded machine cannot make
		// this fail; what is asserted is that the proxy closed it at all.
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		if _, err := io.ReadAll(br); err != nil {
			t.Fatalf("the tunnel was not closed by the proxy: %v", err)
		}
		up.SetReadDeadline(time.Now().Add(60 * time.Second))
		got, err := io.ReadAll(up)
		if err != nil || string(got) != "ping" {
			t.Errorf("origin side: %q %v", got, err)
		}
		if r := rec.await(t, 0, nil); r.Verdict != "allowed" || r.Up != 4 || r.Down != 0 {
			t.Errorf("record %+v", r)
		}
	})
	t.Run("SOCKS5", func(t *testing.T) {
		tlsOver := func(c net.Conn, name string) (string, error) {
			cfg := &tls.Config{RootCAs: origin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: name}
			tc := tls.Client(c, cfg)
			tc.SetDeadline(time.Now().Add(20 * time.Second))
			if err := tc.Handshake(); err != nil {
				return "", err
			}
			fmt.Fprintf(tc, "GET /s HTTP/1.0\r\nHost: %s\r\n\r\n", name)
			resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
			if err != nil {
				return "", err
			}
			b, _ := io.ReadAll(resp.Body)
			tc.Close() // the tunnel, and so its record, ends with the client
			return string(b), nil
		}
		pattern := map[string]ConnVerdict{"www.example.com": pattern, "rebind.test": {Allowed: true, Rule: "allow net *.test"}}
		for _, tc := range []struct {
			name     string
			reach    func(netip.Addr) bool
			greeting []byte
			target   []byte // ATYP, address, port
			sni      string
			code     byte   // the SOCKS5 reply
			body     string // what came back through TLS, when code is 0
			reason   string // in the record, when refused
		}{
			{name: "allowed by a host pattern", reach: allowLoop, target: socksName("www.example.com", oport), sni: "www.example.com",
				body: "hello from www.example.com"},
			{name: "unlisted host", reach: allowLoop, target: socksName("unlisted.test", oport), code: socksNotAllowed, reason: "--allow-net unlisted.test"},
			{name: "a name resolving to loopback", target: socksName("rebind.test", oport), code: socksNotAllowed, reason: "loopback, private"},
			{name: "an address literal without a rule naming it", reach: allowLoop, target: append([]byte{socksAtypIPv4, 127, 0, 0, 1}, byte(oport>>8), byte(oport)), code: socksNotAllowed, reason: "127.0.0.1"},
			{name: "SNI mismatch", reach: allowLoop, target: socksName("www.example.com", oport), sni: "other.test", reason: `"other.test" is not the host`},
			{name: "BIND is not offered", reach: allowLoop, target: socksName("www.example.com", oport), greeting: []byte{5, 1, 0, 5, 2, 0}, code: socksCmdUnsupp, reason: "CONNECT only"},
			{name: "authentication only", reach: allowLoop, greeting: []byte{5, 1, 2}, code: socksNoMethod, reason: "no method without authentication"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				px := mk(tc.reach, pattern)
				c, err := net.Dial("tcp", strings.TrimPrefix(px, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				g := tc.greeting
				if g == nil {
					g = []byte{5, 1, 0, 5, 1, 0}
				}
				c.Write(append(append([]byte(nil), g...), tc.target...))
				var choice [2]byte
				if _, err := io.ReadFull(c, choice[:]); err != nil {
					t.Fatal(err)
				}
				code := choice[1]
				if code == socksMethodNoAuth {
					var reply [10]byte
					if _, err := io.ReadFull(c, reply[:]); err != nil {
						t.Fatal(err)
					}
					code = reply[1]
				}
				if code != tc.code {
					t.Fatalf("reply %d, want %d", code, tc.code)
				}
				if code == socksSucceeded {
					c.SetDeadline(time.Time{})
					body, err := tlsOver(c, tc.sni)
					if tc.body != "" && (err != nil || !strings.HasPrefix(body, tc.body)) {
						t.Fatalf("through SOCKS5: %q %v", body, err)
					}
					if tc.body == "" && err == nil {
						t.Fatalf("TLS went through: %q", body)
					}
				}
				r := rec.await(t, 0, nil)
				if r.Method != "SOCKS5" {
					t.Errorf("record %+v", r)
				}
				if tc.body != "" && (r.Verdict != "allowed" || r.Up == 0 || r.Down == 0 || r.Addr == "") {
					t.Errorf("record %+v", r)
				}
				if tc.reason != "" && (r.Verdict != "refused" || !strings.Contains(r.Reason, tc.reason) || r.Addr != "") {
					t.Errorf("record %+v, want refused with %q", r, tc.reason)
				}
			})
		}
	})
}

// socksName is a SOCKS5 request's target by name (as socks5h sends it).
func socksName(host string, port int) []byte {
	return append(append([]byte{socksAtypName, byte(len(host))}, host...), byte(port>>8), byte(port))
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

// TestRefusalRecordedBeforeAnswer: a command that exits the moment it is
// refused must find the refusal already recorded, since the end of the
// command reads the record to say what was refused and how to allow it
// (network_headless failed once in CI when the record came after the 403).
func TestRefusalRecordedBeforeAnswer(t *testing.T) {
	seenFirst := make(chan bool, 4)
	var got atomicBool
	u := proxyFixture(t, &Proxy{
		Decide: netTable(nil),
		Record: func(ConnRecord) {
			time.Sleep(50 * time.Millisecond) // room for an early answer to arrive
			seenFirst <- !got.get()
		},
	})
	pu, _ := url.Parse(u)
	for _, tc := range []struct{ name, target string }{
		{"absolute-form GET", "http://unlisted.test/"},
		{"CONNECT", "https://unlisted.test/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got.set(false)
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}}
			resp, err := c.Get(tc.target)
			got.set(true)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403", resp.StatusCode)
				}
			}
			select {
			case first := <-seenFirst:
				if !first {
					t.Error("the command heard of the refusal before it was recorded")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no refusal recorded")
			}
		})
	}
}

type atomicBool struct {
	mu sync.Mutex
	v  bool
}

func (b *atomicBool) set(v bool) { b.mu.Lock(); b.v = v; b.mu.Unlock() }
func (b *atomicBool) get() bool  { b.mu.Lock(); defer b.mu.Unlock(); return b.v }
