package permission

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Rule sources, least authoritative first. Later layers win ties; a project
// rule never loosens a deny from another layer.
const (
	layerDefault = iota
	layerUser
	layerProject
	layerFlag
)

// rule is one allow / ask / deny line.
type rule struct {
	verdict Verdict
	tool    string     // "bash", "read", "write" or a tool name
	src     string     // the pattern as written
	words   []string   // bash: glob words; "*" alone matches any run of words
	path    string     // file tools: absolute glob path
	hosts   []hostPort // net: host patterns and ports (several for a preset)
	name    string     // mcp: a glob of MCP tool names (mcp.go)
	// preset: the hosts came from the project's lockfiles (@lockfiles),
	// which the agent can write, not from a host the user typed or a
	// shipped preset, so they never count as naming a host exactly: they
	// cannot open loopback or the local network.
	preset bool
	layer  int
	origin string // "default", "path:line", "--allow", "always"

	lits, nonStar, litChars int // specificity, see moreSpecific
}

func (r *rule) text() string {
	if r.tool == "mcp" {
		return r.verdict.String() + " " + r.src
	}
	return r.verdict.String() + " " + r.tool + " " + r.src
}

func (r *rule) isBash() bool { return r.tool == "bash" }

type ruleSet struct {
	all    []*rule
	byName map[string][]*rule // bash rules by literal first word
	wild   []*rule            // bash rules whose first word is a glob
	files  []*rule
	net    []*rule
	mcp    []*rule
}

func (rs *ruleSet) clone() *ruleSet {
	n := &ruleSet{}
	for _, r := range rs.all {
		n.add(r)
	}
	return n
}

func (rs *ruleSet) add(r *rule) {
	rs.all = append(rs.all, r)
	if r.tool == "net" {
		rs.net = append(rs.net, r)
		return
	}
	if r.tool == "mcp" {
		rs.mcp = append(rs.mcp, r)
		return
	}
	if !r.isBash() {
		rs.files = append(rs.files, r)
		return
	}
	if rs.byName == nil {
		rs.byName = map[string][]*rule{}
	}
	first := r.words[0]
	if first != "*" && !hasGlob(first) {
		name := unescapeGlob(first)
		rs.byName[name] = append(rs.byName[name], r)
		return
	}
	rs.wild = append(rs.wild, r)
}

func (rs *ruleSet) addLines(layer int, origin string, lines []string, g *Gate) error {
	for _, l := range lines {
		r, err := parseRuleLine(l, g)
		if err != nil {
			return fmt.Errorf("%q: %w", l, err)
		}
		r.layer, r.origin = layer, origin
		rs.add(r)
	}
	return nil
}

func (rs *ruleSet) addFile(layer int, path, data string, g *Gate) error {
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseRuleLine(line, g)
		if err != nil {
			return fmt.Errorf("%s:%d: %w (expected: allow|ask|deny bash|read|write|TOOL PATTERN)", path, i+1, err)
		}
		r.layer, r.origin = layer, fmt.Sprintf("%s:%d", path, i+1)
		rs.add(r)
	}
	return nil
}

// parseRuleLine parses "VERDICT TOOL PATTERN".
func parseRuleLine(line string, g *Gate) (*rule, error) {
	verdict, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	var v Verdict
	switch verdict {
	case "allow":
		v = Allow
	case "ask":
		v = Ask
	case "deny":
		v = Deny
	default:
		return nil, fmt.Errorf("unknown verdict %q", verdict)
	}
	tool, pat, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if tool == "" {
		return nil, errors.New("missing tool")
	}
	if strings.HasPrefix(tool, mcpPrefix) {
		return newMCPRule(v, tool, strings.TrimSpace(pat))
	}
	return newRule(v, tool, strings.TrimSpace(pat), g)
}

// parseFlagRule parses a --allow/--deny value: "TOOL PATTERN", or a bare
// bash pattern.
func parseFlagRule(v Verdict, s string, g *Gate) (*rule, error) {
	s = strings.TrimSpace(s)
	tool, pat, _ := strings.Cut(s, " ")
	if strings.HasPrefix(tool, mcpPrefix) {
		return newMCPRule(v, tool, strings.TrimSpace(pat))
	}
	if isToolWord(tool) {
		return newRule(v, tool, strings.TrimSpace(pat), g)
	}
	return newRule(v, "bash", s, g)
}

func isToolWord(s string) bool {
	return s == "bash" || s == "read" || s == "write" || s == "net" || strings.HasSuffix(s, "_file")
}

func newRule(v Verdict, tool, pat string, g *Gate) (*rule, error) {
	if pat == "" {
		return nil, errors.New("missing pattern")
	}
	r := &rule{verdict: v, tool: tool, src: pat}
	if tool == "bash" {
		words, err := splitPattern(pat)
		if err != nil {
			return nil, err
		}
		if len(words) == 0 {
			return nil, errors.New("missing pattern")
		}
		r.words = words
		for _, w := range words {
			if w == "*" {
				continue
			}
			r.nonStar++
			if !hasGlob(w) {
				r.lits++
			}
			r.litChars += literalChars(w)
		}
		return r, nil
	}
	if tool == "net" {
		return newNetRule(r, pat, g.o.Project)
	}
	if strings.ContainsAny(tool, " \t*") {
		return nil, fmt.Errorf("bad tool %q", tool)
	}
	r.path = g.abs(pat, g.o.Project)
	r.litChars = literalChars(r.path)
	return r, nil
}

// moreSpecific reports whether a beats b: more words other than "*", then
// more literal characters, then more fully literal words; then the later source,
// then the stricter verdict.
func moreSpecific(a, b *rule) bool {
	if a.nonStar != b.nonStar {
		return a.nonStar > b.nonStar
	}
	if a.litChars != b.litChars {
		return a.litChars > b.litChars
	}
	if a.lits != b.lits {
		return a.lits > b.lits
	}
	if a.layer != b.layer {
		return a.layer > b.layer
	}
	return a.verdict > b.verdict
}

// pick chooses among matching rules: the most specific wins, except that a
// project rule never loosens a deny from the user, the defaults or flags.
func pick(matches []*rule) *rule {
	var best, authDeny *rule
	for _, r := range matches {
		if best == nil || moreSpecific(r, best) {
			best = r
		}
		if r.verdict == Deny && r.layer != layerProject && (authDeny == nil || moreSpecific(r, authDeny)) {
			authDeny = r
		}
	}
	if best != nil && best.layer == layerProject && best.verdict != Deny && authDeny != nil {
		return authDeny
	}
	return best
}

// splitPattern splits a bash pattern into glob words. Quotes group and make
// their contents literal; a backslash escapes the next character. Glob
// characters outside quotes stay special; literal ones come out escaped.
func splitPattern(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("pattern ends in a backslash")
			}
			i++
			cur.WriteString(escapeGlob(string(s[i])))
			in = true
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, errors.New("unterminated quote in pattern")
			}
			cur.WriteString(escapeGlob(s[i+1 : i+1+j]))
			i += j + 1
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '*' || s[i] == '?' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		}
	}
	return false
}

func literalChars(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			n++
		case '*', '?':
		default:
			n++
		}
	}
	return n
}

// globMatch matches s against a glob where * is any run of characters
// (slashes included), ? one byte and \ escapes.
func globMatch(p, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		if px < len(p) {
			switch c := p[px]; c {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				px++
				sx++
				continue
			case '\\':
				if px+1 < len(p) && p[px+1] == s[sx] {
					px += 2
					sx++
					continue
				}
			default:
				if c == s[sx] {
					px++
					sx++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		px, sx = starP+1, starS
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}

// pathMatch matches an absolute path against an absolute glob whose
// segments use globMatch, except that * and ? do not cross "/" and a "**"
// segment matches any number of segments.
func pathMatch(pat, path string) bool {
	return segMatch(strings.Split(pat, "/"), strings.Split(path, "/"))
}

func segMatch(ps, ss []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(ss); i++ {
				if segMatch(ps[1:], ss[i:]) {
					return true
				}
			}
			return false
		}
		if len(ss) == 0 || !globMatch(ps[0], ss[0]) {
			return false
		}
		ps, ss = ps[1:], ss[1:]
	}
	return len(ss) == 0
}

// matchWords matches command tokens against pattern words. In sure mode a
// computed token matches only a "*" word. In maybe mode a computed token
// matches any single word, and an unquoted one (which may split into many
// words or none) any run of words.
func matchWords(pat []string, toks []token, maybe bool) bool {
	m, n := len(pat), len(toks)
	memo := make([]int8, (m+1)*(n+1))
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := i*(n+1) + j
		if memo[k] != 0 {
			return memo[k] > 0
		}
		ok := false
		switch {
		case i == m:
			ok = j == n
			if !ok && maybe {
				ok = true
				for _, t := range toks[j:] {
					if !t.split {
						ok = false
						break
					}
				}
			}
		case pat[i] == "*":
			ok = rec(i+1, j) || (j < n && rec(i, j+1))
		case j == n:
			ok = false
		default:
			t := toks[j]
			switch {
			case !t.dyn:
				ok = globMatch(pat[i], t.s) && rec(i+1, j+1)
			case maybe && t.split:
				ok = rec(i, j+1) || rec(i+1, j+1) || rec(i+1, j)
			case maybe:
				ok = rec(i+1, j+1)
			}
		}
		if ok {
			memo[k] = 1
		} else {
			memo[k] = -1
		}
		return ok
	}
	return rec(0, 0)
}

// bashMatches returns the bash rules that surely match toks (name is the
// command name used to find candidates, which may differ from toks[0].s for
// a program given by path), and the deny/ask rules that might match.
func (rs *ruleSet) bashMatches(name string, toks []token, denyOnly bool) (sure, maybe []*rule) {
	toks = append([]token{{s: name}}, toks[1:]...)
	check := func(r *rule) {
		if denyOnly && r.verdict == Allow {
			return
		}
		if matchWords(r.words, toks, false) {
			sure = append(sure, r)
		} else if r.verdict != Allow && matchWords(r.words, toks, true) {
			maybe = append(maybe, r)
		}
	}
	for _, r := range rs.byName[name] {
		check(r)
	}
	for _, r := range rs.wild {
		check(r)
	}
	return sure, maybe
}

// fileMatches returns the file rules for a read or write of abs by tool.
func (rs *ruleSet) fileMatches(tool string, write bool, abs string) []*rule {
	kind := "read"
	if write {
		kind = "write"
	}
	var out []*rule
	for _, r := range rs.files {
		if (r.tool == kind || r.tool == tool) && pathMatch(r.path, abs) {
			out = append(out, r)
		}
	}
	return out
}

// relPattern is the narrowest file pattern for abs: relative to the project
// when inside it.
func (g *Gate) relPattern(abs string) string {
	if rel, err := filepath.Rel(g.o.Project, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return escapeGlob(rel)
	}
	return escapeGlob(abs)
}
