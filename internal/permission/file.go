package permission

import "fmt"

// decideFile decides a file tool's read or write of req.Path. The walls
// come first and no rule, flag or answer moves them: secrets are never
// read, nothing outside the writable roots (or inside a protected
// carve-out) is written.
func (g *Gate) decideFile(rs *ruleSet, req Request) Decision {
	kind := "read"
	if req.Write {
		kind = "write"
	}
	d := Decision{tool: kind}
	abs := g.abs(req.Path, g.o.Project)
	if req.Write {
		if rule, reason := g.writeWall(abs); rule != "" {
			d.Verdict, d.Rule, d.Reason = Deny, rule, "Not written: "+reason
			return d
		}
	} else if rule, reason := g.readWall(abs); rule != "" {
		d.Verdict, d.Rule, d.Reason = Deny, rule, "Not read: "+reason
		return d
	}
	best, c := fileRule(rs, req.Tool, req.Write, abs)
	switch {
	case best == nil:
		d.Verdict, d.Rule = Ask, "default: ask"
		d.patterns = []tpat{{kind, g.relPattern(c)}}
	case best.verdict == Deny:
		d.Verdict, d.Rule = Deny, best.text()
		d.Reason = fmt.Sprintf("Not allowed: %s of %s is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", req.Tool, req.Path, best.text(), best.origin)
	case best.verdict == Ask:
		d.Verdict, d.Rule = Ask, best.text()
		d.patterns = []tpat{{kind, g.relPattern(c)}}
	default:
		d.Verdict, d.Rule = Allow, best.text()
	}
	return d
}
