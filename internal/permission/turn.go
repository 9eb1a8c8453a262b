package permission

import (
	"fmt"
	"slices"
)

// AllowFor adds allow rules to the rules in force until the returned func
// is called: a custom command's allowed-tools, for the turn it starts.
// rules are rule-file lines without the verdict ("bash git add *",
// "write src/**", "mcp__github"); origin names them in /permissions and
// the record. They sit in the project's layer when project is set (a
// project rule never loosens another layer's deny), else the user's; like
// every allow they lift no deny of a more specific rule and no wall.
func (g *Gate) AllowFor(origin string, rules []string, project bool) (undo func(), err error) {
	layer := layerUser
	if project {
		layer = layerProject
	}
	var added []*rule
	for _, l := range rules {
		r, err := parseRuleLine("allow "+l, g)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", l, err)
		}
		r.layer, r.origin = layer, origin
		added = append(added, r)
	}
	g.mu.Lock()
	rs := g.rules.clone()
	for _, r := range added {
		rs.add(r)
	}
	g.rules = rs
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := &ruleSet{}
		for _, r := range g.rules.all {
			if !slices.Contains(added, r) {
				n.add(r)
			}
		}
		g.rules = n
	}, nil
}
