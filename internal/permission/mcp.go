package permission

import (
	"fmt"
	"path"
	"strings"
)

// mcpPrefix begins MCP tools' names: mcp__SERVER__TOOL (Claude Code's
// convention). A rule names them alone, without a pattern:
//
//	allow mcp__github__get_issue     one tool
//	deny  mcp__github                every tool of a server
//	ask   mcp__github__create_*      a glob (* within the name)
//
// Nothing matched asks: an MCP server is a program of someone else's, and
// what its tools say of themselves (a read-only hint) is shown in the
// prompt but never decides.
const mcpPrefix = "mcp__"

func newMCPRule(v Verdict, name, pat string) (*rule, error) {
	if pat != "" {
		return nil, fmt.Errorf("an MCP rule names the tool alone (%s), without a pattern", name)
	}
	glob := name
	if !strings.Contains(strings.TrimPrefix(name, mcpPrefix), "__") && !strings.HasSuffix(name, "*") {
		glob = name + "__*" // a server's name alone: all its tools
	}
	if _, err := path.Match(glob, "mcp__x__y"); err != nil {
		return nil, fmt.Errorf("bad MCP tool pattern %q: %w", name, err)
	}
	r := &rule{verdict: v, tool: "mcp", src: name, name: glob}
	r.litChars = literalChars(glob)
	if !hasGlob(glob) {
		r.nonStar, r.lits = 1, 1
	}
	return r, nil
}

// decideMCP decides a call of the MCP tool name by the rules naming it.
func decideMCP(rs *ruleSet, name string) Decision {
	d := Decision{tool: "mcp", patterns: []tpat{{"mcp", name}}}
	var matches []*rule
	for _, r := range rs.mcp {
		if ok, _ := path.Match(r.name, name); ok {
			matches = append(matches, r)
		}
	}
	best := pick(matches)
	switch {
	case best == nil:
		d.Verdict, d.Rule = Ask, "default: ask (MCP tools ask until a rule allows them)"
	case best.verdict == Deny:
		d.Verdict, d.Rule, d.patterns = Deny, best.text(), nil
		d.Reason = fmt.Sprintf("Not allowed: the MCP tool %s is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", name, best.text(), best.origin)
	case best.verdict == Ask:
		d.Verdict, d.Rule = Ask, best.text()
	default:
		d.Verdict, d.Rule = Allow, best.text()
	}
	return d
}
