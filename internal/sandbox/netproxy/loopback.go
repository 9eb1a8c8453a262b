package netproxy

import (
	"bufio"
	"context"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Loopback forwards: inside the walls, localhost is the sandbox's own
// loopback, so a service on the user's machine (a database, a dev
// server) is out of reach, and ordinary clients skip the proxy for
// loopback names (NO_PROXY). For each port a rule names exactly on a
// loopback host (allow net 127.0.0.1:5432, localhost:8080, [::1]:6379),
// the sandbox listens on that port of its own loopback and hands every
// connection to the host, where the proxy decides it as any connection
// (the rule, recorded) and splices it to the host's loopback port. So
// psql, curl and a Python client reach the allowed host service as they
// would outside, and nothing else of the host's loopback. In bwrap and
// landlock sessions the launcher listens; in a container, its init.

// LoopbackForward is one host loopback port commands may reach.
type LoopbackForward struct {
	Host string // as the rule names it: localhost, 127.0.0.1 or ::1
	Port int
}

// LoopbackPorts are the ports the sandbox listens on for p's forwards.
func (p *Proxy) LoopbackPorts() []int {
	if p == nil {
		return nil
	}
	var out []int
	for _, f := range p.Loopback {
		if f.Port > 0 && f.Port != ProxyPort && !containsInt(out, f.Port) {
			out = append(out, f.Port)
		}
	}
	sort.Ints(out)
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// forwardHost is the host a forwarded port goes to.
func (p *Proxy) forwardHost(port int) (string, bool) {
	for _, f := range p.Loopback {
		if f.Port == port {
			return f.Host, true
		}
	}
	return "", false
}

// quietAnswer answers nothing: a forwarded connection is a plain byte
// stream from its first byte.
type quietAnswer struct{}

func (quietAnswer) established() error { return nil }

// ServeLoopback takes a connection a command made to a forwarded port
// inside and, if the rules still allow it, splices it to the host's
// loopback port; a refused one is closed (and recorded, so the end of
// the command says why).
func (p *Proxy) ServeLoopback(ctx context.Context, c net.Conn, port int) {
	defer c.Close()
	p.once.Do(func() {
		n := p.MaxConns
		if n <= 0 {
			n = defaultMaxConns
		}
		p.sem = make(chan struct{}, n)
	})
	host, ok := p.forwardHost(port)
	rec := ConnRecord{Time: time.Now(), Verdict: "refused", Method: "LOOPBACK", Port: port}
	defer func() {
		rec.Duration = time.Since(rec.Time)
		p.record(rec)
	}()
	if !ok {
		rec.Reason = "no rule forwards this port"
		return
	}
	if !p.acquire() {
		rec.Host, rec.Reason = host, "too many connections at once"
		return
	}
	defer p.release()
	err := p.tunnel(ctx, c, bufio.NewReader(c), host, port, quietAnswer{}, &rec)
	if ref, ok := err.(*errRefused); ok {
		rec.Verdict, rec.Reason = "refused", ref.reason
	}
}

// LoopbackNote explains a refused connection to a loopback address in a
// command's output: the sandbox's localhost is its own, and which of the
// host's loopback ports (if any) the rules forward.
func (p *Proxy) LoopbackNote(output []byte) string {
	o := string(output)
	lo := strings.ToLower(o)
	refused := false
	// curl, Python, Node, Go, psql, redis-cli and wget say it so.
	for _, w := range []string{"connection refused", "econnrefused", "couldn't connect to server", "failed to connect", "could not connect"} {
		refused = refused || strings.Contains(lo, w)
	}
	if !refused {
		return ""
	}
	if !strings.Contains(o, "localhost") && !strings.Contains(o, "127.0.0.1") && !strings.Contains(o, "::1") && !strings.Contains(o, "[::1]") {
		return ""
	}
	ports := p.LoopbackPorts()
	fw := "none is now"
	if len(ports) > 0 {
		var ps []string
		for _, n := range ports {
			ps = append(ps, strconv.Itoa(n))
		}
		fw = "forwarded now: " + strings.Join(ps, ", ")
	}
	return "\n[harness: localhost inside the sandbox is the sandbox's own loopback; a service on the user's machine is reached only on a port a rule names exactly (allow net 127.0.0.1:PORT), " + fw + ". A connection refused there is not the user's service refusing: ask the user to allow the port if it is needed]\n"
}
