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
	origin, err := startProbeOrigin()
	if err != nil {
		return 0, err
	}
	defer origin.ln.Close()
	px := probeProxy(origin.port)
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
	sb, err := Open(ctx, walls.NewLive(p), backend, append(opts, WithProxy(px))...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	if !OffersProxy(sb) {
		fmt.Fprintf(out, "network proxy: not offered by backend %s here (see cannot hold above): commands have no network\n", backend)
		return 0, nil
	}
	how := "the launcher forwards"
	if s, ok := sb.(*instance); ok && s.launch == nil {
		how = "each command's own sandbox hands over"
	}
	fmt.Fprintf(out, "network proxy: backend %s, port %d inside (%s), host proxy in this process\n", backend, netproxy.ProxyPort, how)
	rep := &probeReport{out: out}
	got := proxyConnect(ctx, sb, fmt.Sprintf("%s:%d", probeHost, origin.port))
	rep.line(strings.Contains(got, "200 Connection established") && strings.Contains(got, origin.token), "a loopback origin through the proxy", firstLine([]byte(got)))
	got = proxyConnect(ctx, sb, "unlisted.invalid:443")
	rep.line(strings.Contains(got, " 403 "), "an unlisted host refused", firstLine([]byte(got)))
	r, err := sb.Run(ctx, Cmd{Script: fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo DIRECT' 2>&1`, origin.port), Timeout: 10 * time.Second})
	direct := err == nil && !strings.Contains(string(r.Output), "DIRECT")
	rep.line(direct, "no direct connection to the host", "")
	ok, detail := probeRecords(px)
	rep.line(ok, "each connection recorded", detail)
	return rep.failed, nil
}

// probeHost is the name the probe's proxy rule allows; .invalid never
// resolves, so only the proxy's own lookup reaches the origin.
const probeHost = "harness-doctor.invalid"

// probeOrigin is a loopback server on the host that answers each
// connection with its token.
type probeOrigin struct {
	ln    net.Listener
	port  int
	token string
}

func startProbeOrigin() (*probeOrigin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &probeOrigin{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, token: fmt.Sprintf("harness-probe-%d", time.Now().UnixNano())}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, o.token+"\n")
			c.Close()
		}
	}()
	return o, nil
}

// probeProxy allows probeHost at port, which it resolves to loopback,
// and nothing else.
func probeProxy(port int) *netproxy.Proxy {
	return &netproxy.Proxy{
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
}

// proxyConnect asks the proxy inside sb for a tunnel to target and returns
// what came back (or the error).
func proxyConnect(ctx context.Context, sb Sandbox, target string) string {
	// bash's /dev/tcp, so the probe needs no client installed.
	script := fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d || exit 3; printf "CONNECT %s HTTP/1.1\r\n\r\n" >&3; timeout 10 head -c 300 <&3'`, netproxy.ProxyPort, target)
	r, err := sb.Run(ctx, Cmd{Script: script, Timeout: 20 * time.Second})
	if err != nil {
		return err.Error()
	}
	return string(r.Output)
}

// probeReport prints one line per probe and counts the failures.
type probeReport struct {
	out    io.Writer
	failed int
}

func (p *probeReport) line(ok bool, name, detail string) {
	word := "ok      "
	if !ok {
		word = "FAILED  "
		p.failed++
	}
	fmt.Fprintf(p.out, "  %s %-44s %s\n", word, name, detail)
}

// probeRecords checks the proxy recorded the tunnel (with bytes down) and
// the refusal, and describes what it recorded.
func probeRecords(px *netproxy.Proxy) (bool, string) {
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
	return len(recs) == 2 && allowed == 1 && refused == 1, fmt.Sprintf("%d records: %s", len(recs), strings.Join(seen, ", "))
}
