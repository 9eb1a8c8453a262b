package permission

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Network rules: "allow net HOST-PATTERN[:PORT]", "ask net …", "deny net …".
// HOST-PATTERN is a host name (example.com), *.example.com (any name below
// it, not example.com itself), * (any name), an IP address (only ever
// matched by itself: no pattern reaches an IP literal), or @NAME, a
// shipped preset (netPresets). PORT is a number or *; without one the
// rule covers 443 and 80. A connection nothing matches asks.

// hostPort is one host pattern of a net rule.
type hostPort struct {
	host string // lower case, no trailing dot; "*", "*.suffix", a name or an IP
	port int    // 0: 80 and 443; -1: any
}

// netPresets are the official package registries, by name.
var netPresets = map[string][]string{
	"go":     {"proxy.golang.org:443", "sum.golang.org:443"},
	"npm":    {"registry.npmjs.org:443"},
	"pypi":   {"pypi.org:443", "files.pythonhosted.org:443"},
	"crates": {"crates.io:443", "index.crates.io:443", "static.crates.io:443"},
}

// NetPresets names the shipped presets and their hosts, for help text.
func NetPresets() map[string][]string {
	out := map[string][]string{}
	for k, v := range netPresets {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func newNetRule(r *rule, pat, project string) (*rule, error) {
	var specs []string
	if pat == "@lockfiles" {
		specs = LockfileHosts(project)
		if len(specs) == 0 {
			// Nothing to allow; the rule stays, matching nothing.
			r.hosts = []hostPort{{host: "lockfiles.invalid", port: 443}}
			return r, nil
		}
		r.preset = true
	} else if name, ok := strings.CutPrefix(pat, "@"); ok {
		hosts, ok := netPresets[name]
		if !ok {
			names := make([]string, 0, len(netPresets))
			for k := range netPresets {
				names = append(names, "@"+k)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown network preset %q (known: %s, @lockfiles)", pat, strings.Join(names, ", "))
		}
		specs = hosts
	} else {
		specs = []string{pat}
	}
	for _, s := range specs {
		hp, err := parseHostPort(s)
		if err != nil {
			return nil, err
		}
		r.hosts = append(r.hosts, hp)
	}
	// Specificity: a named host beats a pattern, a named port beats none.
	hp := r.hosts[0]
	if !strings.HasPrefix(hp.host, "*") {
		r.nonStar = 2
	} else if hp.host != "*" {
		r.nonStar = 1
	}
	if hp.port > 0 {
		r.lits = 1
	}
	r.litChars = len(strings.TrimLeft(hp.host, "*"))
	return r, nil
}

// parseHostPort parses HOST[:PORT] with [v6]:port for IPv6.
func parseHostPort(s string) (hostPort, error) {
	s = strings.TrimSpace(s)
	host, portStr := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return hostPort{}, fmt.Errorf("bad host %q", s)
		}
		host, portStr = s[1:end], strings.TrimPrefix(s[end+1:], ":")
	case strings.Count(s, ":") == 1:
		host, portStr, _ = strings.Cut(s, ":")
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.ContainsAny(host, " \t/@?#") || strings.Contains(host[1:], "*") {
		return hostPort{}, fmt.Errorf("bad host pattern %q (want example.com, *.example.com, * or an IP)", s)
	}
	if strings.HasPrefix(host, "*") && host != "*" && !strings.HasPrefix(host, "*.") {
		return hostPort{}, fmt.Errorf("bad host pattern %q (a * stands for whole labels: *.example.com)", s)
	}
	hp := hostPort{host: host}
	switch portStr {
	case "":
	case "*":
		hp.port = -1
	default:
		n, err := strconv.Atoi(portStr)
		if err != nil || n < 1 || n > 65535 {
			return hostPort{}, fmt.Errorf("bad port in %q", s)
		}
		hp.port = n
	}
	return hp, nil
}

// match reports whether hp covers host:port, and whether it names both
// exactly (what private addresses require).
func (hp hostPort) match(host string, port int) (ok, exact bool) {
	switch {
	case hp.port == 0 && port != 80 && port != 443:
		return false, false
	case hp.port > 0 && hp.port != port:
		return false, false
	}
	if hp.host == host {
		return true, hp.port > 0
	}
	if net.ParseIP(host) != nil {
		return false, false // IP literals only by a rule naming them
	}
	if hp.host == "*" {
		return true, false
	}
	if suffix, ok := strings.CutPrefix(hp.host, "*"); ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
		return true, false
	}
	return false, false
}

// NetRequest is an outbound connection a sandboxed command asked for.
type NetRequest struct {
	Host    string // as asked: a name or an IP literal
	Port    int
	Command string // the command that asked, when known
}

func (r NetRequest) target() string {
	return net.JoinHostPort(normHost(r.Host), strconv.Itoa(r.Port))
}

// NetVerdict is the outcome of CheckNet.
type NetVerdict struct {
	Allowed bool
	// Exact is set when the deciding rule names this host and port
	// exactly: only then may the connection reach a loopback, private or
	// link-local address.
	Exact bool
	Rule  string // the rule or reason that decided
	// Reason tells the command why it was refused.
	Reason string
}

// normHost lower-cases a host and drops a trailing dot and IPv6 brackets.
func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// DecideNet decides a connection without prompting.
func (g *Gate) DecideNet(req NetRequest) (Decision, bool) {
	host := normHost(req.Host)
	g.mu.RLock()
	rs := g.rules
	g.mu.RUnlock()
	var matches []*rule
	exact := map[*rule]bool{}
	for _, r := range rs.net {
		for _, hp := range r.hosts {
			if ok, ex := hp.match(host, req.Port); ok {
				matches = append(matches, r)
				exact[r] = exact[r] || (ex && !r.preset)
				break
			}
		}
	}
	target := net.JoinHostPort(host, strconv.Itoa(req.Port))
	// "Always" saves the host alone for the web ports, so the saved rule
	// is not one naming host and port exactly, which private addresses
	// need: an answer to a prompt never opens the local network.
	pat := target
	if strings.Contains(host, ":") {
		pat = "[" + host + "]:" + strconv.Itoa(req.Port)
	}
	if req.Port == 80 || req.Port == 443 {
		pat = host
		if strings.Contains(host, ":") {
			pat = "[" + host + "]"
		}
	}
	d := Decision{tool: "net", patterns: []tpat{{"net", pat}}}
	best := pick(matches)
	switch {
	case best == nil:
		d.Verdict, d.Rule = Ask, "default: ask net *"
	case best.verdict == Deny:
		d.Verdict, d.Rule = Deny, best.text()
		d.Reason = fmt.Sprintf("Not connected: %s is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", target, best.text(), best.origin)
	case best.verdict == Ask:
		d.Verdict, d.Rule = Ask, best.text()
	default:
		d.Verdict, d.Rule = Allow, best.text()
	}
	if g.o.Yolo && d.Verdict == Ask {
		d.Rule = "yolo (was: " + d.Rule + ")"
		d.Verdict = Allow
	}
	return d, best != nil && exact[best] && d.Verdict == Allow
}

// CheckNet decides a connection, asking the user when the decision is
// Ask (the connection waits for the answer), persisting "always" as
// "allow net HOST:PORT" in the project file, and recording the outcome.
func (g *Gate) CheckNet(ctx context.Context, req NetRequest) NetVerdict {
	preq := Request{Tool: "net", Command: req.target()}
	if req.Command != "" {
		preq.Command += "  (asked by: " + req.Command + ")"
	}
	d, exact := g.DecideNet(req)
	switch d.Verdict {
	case Allow:
		g.record(preq, d, "allow")
		return NetVerdict{Allowed: true, Exact: exact, Rule: d.Rule}
	case Ask:
	default:
		g.record(preq, d, "deny")
		return NetVerdict{Rule: d.Rule, Reason: d.Reason}
	}
	host := normHost(req.Host)
	if g.o.Prompter == nil {
		g.record(preq, d, "deny (non-interactive)")
		return NetVerdict{Rule: d.Rule, Reason: fmt.Sprintf(
			"harness refused the connection to %s: no rule allows it and harness is running non-interactively. To allow it, re-run with --allow-net %s (or add \"allow net %s\" to .agents/permissions).",
			req.target(), host, host)}
	}
	g.promptMu.Lock()
	defer g.promptMu.Unlock()
	if d2, exact2 := g.DecideNet(req); d2.Verdict != Ask {
		if d2.Verdict == Allow {
			g.record(preq, d2, "allow")
			return NetVerdict{Allowed: true, Exact: exact2, Rule: d2.Rule}
		}
		g.record(preq, d2, "deny")
		return NetVerdict{Rule: d2.Rule, Reason: d2.Reason}
	}
	pattern := d.Pattern()
	ans, err := g.o.Prompter.Prompt(ctx, preq, d, pattern)
	if err != nil {
		g.record(preq, d, "deny (prompt failed)")
		return NetVerdict{Rule: d.Rule, Reason: fmt.Sprintf("harness refused the connection to %s: the permission prompt failed (%v)", req.target(), err)}
	}
	switch ans.Choice {
	case Yes:
		g.record(preq, d, "yes")
		return NetVerdict{Allowed: true, Rule: d.Rule + " (answered yes)"}
	case Session:
		ans := "yes for this session: " + pattern
		if err := g.grant(d, false); err != nil {
			ans = "yes (not remembered: " + err.Error() + ")"
		}
		g.record(preq, d, ans)
		return NetVerdict{Allowed: true, Rule: "allow net " + pattern + " (this session)"}
	case Always:
		ans := "always " + pattern
		if err := g.persist(d); err != nil {
			ans += " (not saved: " + err.Error() + ")"
		}
		g.record(preq, d, ans)
		return NetVerdict{Allowed: true, Rule: "allow net " + pattern}
	default:
		reason := strings.TrimSpace(ans.Reason)
		g.record(preq, d, strings.TrimSpace("no "+reason))
		msg := "the user refused the connection to " + req.target()
		if reason != "" {
			msg += ": " + reason
		}
		return NetVerdict{Rule: d.Rule, Reason: msg}
	}
}

// NetRules lists the network rules in force, for /sandbox and /network.
func (g *Gate) NetRules() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for _, r := range g.rules.net {
		out = append(out, fmt.Sprintf("%s  (%s)", r.text(), r.origin))
	}
	if g.o.Yolo {
		out = append(out, "--yolo: every connection no rule denies is allowed")
	} else {
		out = append(out, "ask net *  (default: anything else asks; refused when non-interactive)")
	}
	return out
}
