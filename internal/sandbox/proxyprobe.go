package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// ProbeNetwork checks the proxy path end to end for `harness doctor`: a
// loopback origin on the host, reached from inside a sandbox of the named
// backend, opened with opts (WithLauncher), through a proxy whose only
// rule names it; an unlisted host refused; no direct connection; each
// connection recorded. It prints one line per probe and returns how many
// failed.
func ProbeNetwork(ctx context.Context, backend string, out io.Writer, opts ...Option) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	token := fmt.Sprintf("harness-probe-%d", time.Now().UnixNano())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, token+"\n")
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	const probeHost = "harness-doctor.invalid"
	px := &netproxy.Proxy{
		Decide: func(_ context.Context, host string, p int) netproxy.ConnVerdict {
			if host == probeHost && p == port {
				return netproxy.ConnVerdict{Allowed: true, Exact: true, Rule: fmt.Sprintf("allow net %s:%d", probeHost, port)}
			}
			return netproxy.ConnVerdict{Reason: "no rule allows " + host}
		},
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	}
	base, err := os.MkdirTemp(outsideBase(), "harness-netprobe-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(base)
	proj := filepath.Join(base, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		return 0, err
	}
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: base})
	if err != nil {
		return 0, err
	}
	sb, err := Open(ctx, p, backend, append(opts, WithProxy(px))...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	connect := func(target string) string {
		// bash's /dev/tcp, so the probe needs no client installed.
		script := fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d || exit 3; printf "CONNECT %s HTTP/1.1\r\n\r\n" >&3; timeout 10 head -c 300 <&3'`, netproxy.ProxyPort, target)
		r, err := sb.Run(ctx, Cmd{Script: script, Timeout: 20 * time.Second})
		if err != nil {
			return err.Error()
		}
		return string(r.Output)
	}
	failed := 0
	line := func(ok bool, name, detail string) {
		word := "ok      "
		if !ok {
			word, failed = "FAILED  ", failed+1
		}
		fmt.Fprintf(out, "  %s %-44s %s\n", word, name, detail)
	}
	if !OffersProxy(sb) {
		fmt.Fprintf(out, "network proxy: not offered by backend %s here (see cannot hold above): commands have no network\n", backend)
		return 0, nil
	}
	how := "the launcher forwards"
	if s, ok := sb.(*instance); ok && s.launch == nil {
		how = "each command's own sandbox hands over"
	}
	fmt.Fprintf(out, "network proxy: backend %s, port %d inside (%s), host proxy in this process\n", backend, netproxy.ProxyPort, how)
	got := connect(fmt.Sprintf("%s:%d", probeHost, port))
	line(strings.Contains(got, "200 Connection established") && strings.Contains(got, token), "a loopback origin through the proxy", firstLine([]byte(got)))
	got = connect("unlisted.invalid:443")
	line(strings.Contains(got, " 403 "), "an unlisted host refused", firstLine([]byte(got)))
	r, err := sb.Run(ctx, Cmd{Script: fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo DIRECT' 2>&1`, port), Timeout: 10 * time.Second})
	direct := err == nil && !strings.Contains(string(r.Output), "DIRECT")
	line(direct, "no direct connection to the host", "")
	recs := px.Recent()
	for i := 0; i < 100 && len(recs) < 2; i++ { // the first is recorded when its tunnel is over
		time.Sleep(20 * time.Millisecond)
		recs = px.Recent()
	}
	// In either order: the tunnel's record is written when the proxy sees
	// it end, which on a loaded machine came after the refusal's.
	allowed, refused, seen := 0, 0, []string{}
	for _, r := range recs {
		seen = append(seen, fmt.Sprintf("%s %d B down", r.Verdict, r.Down))
		switch {
		case r.Verdict == "allowed" && r.Down > 0:
			allowed++
		case r.Verdict == "refused":
			refused++
		}
	}
	line(len(recs) == 2 && allowed == 1 && refused == 1, "each connection recorded", fmt.Sprintf("%d records: %s", len(recs), strings.Join(seen, ", ")))
	return failed, nil
}
