package permission

import "github.com/harness-dev/harness/internal/sandbox"

// LoopbackForwards lists the host loopback ports the rules of o allow
// exactly (allow net 127.0.0.1:5432, localhost:8080, [::1]:6379), for
// the sandbox to forward into the walls. Only a rule the user wrote
// counts: a preset never names loopback. A malformed rule file is the
// error New would give.
func LoopbackForwards(o Options) ([]sandbox.LoopbackForward, error) {
	o.Prompter, o.Record = nil, nil
	g, err := New(o)
	if err != nil {
		return nil, err
	}
	var out []sandbox.LoopbackForward
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
				out = append(out, sandbox.LoopbackForward{Host: hp.host, Port: hp.port})
			}
		}
	}
	return out, nil
}
