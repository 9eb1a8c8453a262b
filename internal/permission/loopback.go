package permission

import (
	"context"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// LoopbackForwards lists the host loopback ports the rules of o allow
// exactly (allow net 127.0.0.1:5432, localhost:8080, [::1]:6379), for
// the sandbox to forward into the walls. Only a rule the user wrote
// counts: a preset never names loopback. A malformed rule file is the
// error New would give.
func LoopbackForwards(o Options) ([]netproxy.LoopbackForward, error) {
	o.Prompter, o.Record = nil, nil
	g, err := New(o)
	if err != nil {
		return nil, err
	}
	var out []netproxy.LoopbackForward
	seen := map[int]bool{}
	for _, r := range g.rules.net {
		if r.verdict != Allow || r.preset {
			continue
		}
		for _, hp := range r.hosts {
			switch hp.host {
			case "localhost", "127.0.0.1", "::1":
			default:
				continue
			}
			if hp.port > 0 && !seen[hp.port] {
				seen[hp.port] = true
				out = append(out, netproxy.LoopbackForward{Host: hp.host, Port: hp.port})
			}
		}
	}
	return out, nil
}

// NewProxy is the network side of every sandbox harness opens, a
// session's or a one-shot harness sandbox's alike: a proxy that decides
// each connection by the gate (gate is called per connection, so a
// session may build its gate after the sandbox) and forwards into the
// walls the host loopback ports that o's rules name exactly, so ordinary
// clients reach them as localhost. record, when set, hears of every
// connection.
func NewProxy(o Options, gate func() *Gate, record func(netproxy.ConnRecord)) (*netproxy.Proxy, error) {
	fw, err := LoopbackForwards(o)
	if err != nil {
		return nil, err
	}
	return &netproxy.Proxy{
		Decide: func(ctx context.Context, host string, port int) netproxy.ConnVerdict {
			v := gate().CheckNet(ctx, NetRequest{Host: host, Port: port, Command: netproxy.AskedBy(ctx)})
			return netproxy.ConnVerdict{Allowed: v.Allowed, Exact: v.Exact, Rule: v.Rule, Reason: v.Reason}
		},
		Record:   record,
		Loopback: fw,
	}, nil
}
