package seatbelt

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// TestSeatbeltProxyRule checks, by structure, what the proxy adds to each
// macOS profile: TCP sockets and outbound to the proxy's port on localhost,
// nothing else (no bind, no inbound, no other port or host, no DNS), and
// after the profile's own rules so no deny of theirs is undone.
func TestSeatbeltProxyRule(t *testing.T) {
	const port = 49231
	for _, tt := range testPolicies() {
		t.Run(tt.name, func(t *testing.T) {
			base, params := seatbeltProfile(tt.pol, "/private/var/folders/xy/T/harness-session-1")
			withProxy := base + seatbeltProxyRule(port)
			before := profileProblems(base, params, tt.pol)
			after := profileProblems(withProxy, params, tt.pol)
			// The base checker allows no TCP: the rule must be its only
			// complaint, exactly once.
			want := fmt.Sprintf(`network allowed beyond the session's unix sockets: (allow network-outbound (remote ip "localhost:%d"))`, port)
			if len(after) != len(before)+1 || after[len(after)-1] != want {
				t.Fatalf("problems with the proxy rule:\n  %s\nwant those without it plus %q", strings.Join(after, "\n  "), want)
			}
			forms, err := parseSBPL(withProxy)
			if err != nil {
				t.Fatal(err)
			}
			baseForms, _ := parseSBPL(base)
			var added []string
			for _, r := range rules(forms) {
				if r.at < len(baseForms) {
					continue
				}
				var fs []string
				for _, f := range r.filters {
					fs = append(fs, f.String())
				}
				added = append(added, r.action+" "+strings.Join(r.ops, " ")+" "+strings.Join(fs, " "))
			}
			wantAdded := []string{
				"allow system-socket (require-all (socket-domain AF_INET) (socket-type SOCK_STREAM))",
				fmt.Sprintf(`allow network-outbound (remote ip "localhost:%d")`, port),
			}
			if strings.Join(added, "\n") != strings.Join(wantAdded, "\n") {
				t.Errorf("the proxy adds:\n%s\nwant:\n%s", strings.Join(added, "\n"), strings.Join(wantAdded, "\n"))
			}
		})
	}
}

// TestListenProxy: the listener the seatbelt backend points commands at
// serves the proxy, on loopback only.
func TestListenProxy(t *testing.T) {
	recs := make(chan netproxy.ConnRecord, 4)
	refuse := func(_ context.Context, host string, _ int) netproxy.ConnVerdict {
		return netproxy.ConnVerdict{Reason: "no rule allows " + host}
	}
	ln, port, err := listenProxy(&netproxy.Proxy{Decide: refuse, Record: func(c netproxy.ConnRecord) { recs <- c }})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if a := ln.Addr().(*net.TCPAddr); !a.IP.IsLoopback() || a.Port != port {
		t.Fatalf("listening on %v", a)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v %v", resp, err)
	}
	select {
	case r := <-recs:
		if r.Host != "unlisted.test" || r.Verdict != "refused" {
			t.Errorf("record %+v", r)
		}
	case <-time.After(time.Minute):
		t.Error("the refused connection was not recorded")
	}
	env := strings.Join(netproxy.ProxyEnv(port), " ")
	for _, want := range []string{fmt.Sprintf("HTTPS_PROXY=http://127.0.0.1:%d", port), fmt.Sprintf("https_proxy=http://127.0.0.1:%d", port), fmt.Sprintf("ALL_PROXY=socks5h://127.0.0.1:%d", port), "NO_PROXY=localhost"} {
		if !strings.Contains(env, want) {
			t.Errorf("proxy environment lacks %s: %s", want, env)
		}
	}
}
