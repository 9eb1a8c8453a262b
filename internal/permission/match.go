package permission

import (
	"fmt"
	"slices"
)

// match decides a command by the rules. system says the name is the
// program's own; otherwise (./tool, bin/tool) allow rules must name the
// path as written while deny and ask rules match its base name too.
func (sc *shellCheck) match(toks []token, base string, system bool) {
	name := base
	if !system {
		name = toks[0].s
	}
	sure, maybe := sc.rs.bashMatches(name, toks, false)
	if !system {
		s2, m2 := sc.rs.bashMatches(base, toks, true)
		sure, maybe = append(sure, s2...), append(maybe, m2...)
	}
	best := pick(sure)
	slices.SortStableFunc(maybe, func(a, b *rule) int {
		if a.verdict != b.verdict {
			return int(b.verdict - a.verdict)
		}
		if moreSpecific(a, b) {
			return -1
		}
		return 1
	})
	display := render(toks)
	pattern := tpat{}
	if !slices.ContainsFunc(toks, func(t token) bool { return t.dyn }) {
		ws := []string{patternWord(name)}
		for _, t := range toks[1:] {
			ws = append(ws, patternWord(t.s))
		}
		pattern = tpat{"bash", narrowPattern(ws)}
	}
	if best == nil {
		if len(maybe) > 0 {
			sc.ask(maybe[0].text() + " (may match a word computed at run time)")
			return
		}
		sc.add(Ask, "default: ask", "", pattern)
		return
	}
	switch best.verdict {
	case Deny:
		if best.origin == "default" && system && len(maybe) == 0 {
			if rule, ok := sc.g.userAllowedClient(base, toks); ok {
				sc.add(Allow, fmt.Sprintf("%s (yours) beats the default %s for a request of that host", rule, best.text()), "", tpat{})
				return
			}
		}
		sc.add(Deny, best.text(), fmt.Sprintf("Not run: `%s` is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", display, best.text(), best.origin), tpat{})
	case Ask:
		if len(maybe) > 0 {
			pattern = tpat{}
		}
		sc.add(Ask, best.text(), "", pattern)
	default:
		if len(maybe) > 0 {
			sc.ask(maybe[0].text() + " (may match a word computed at run time)")
			return
		}
		sc.add(Allow, best.text(), "", tpat{})
	}
}

// wrapper checks a command that runs another (env, nice, timeout, sudo...):
// the wrapper's own deny and ask rules count, then the inner command
// decides.
func (sc *shellCheck) wrapper(toks, inner []token) {
	base, _ := cmdName(toks[0].s)
	if len(inner) == 0 {
		if base == "exec" || base == "builtin" {
			sc.add(Allow, base+" without a command", "", tpat{})
			return
		}
		sc.match(toks, base, true)
		return
	}
	sure, maybe := sc.rs.bashMatches(base, toks, true)
	if best := pick(sure); best != nil {
		if best.verdict == Deny {
			sc.add(Deny, best.text(), fmt.Sprintf("Not run: `%s` is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", render(toks), best.text(), best.origin), tpat{})
		} else {
			sc.ask(best.text())
		}
	} else if len(maybe) > 0 {
		sc.ask(maybe[0].text() + " (may match a word computed at run time)")
	}
	sc.argv(inner)
}
