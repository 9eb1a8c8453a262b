package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/harness-dev/harness/internal/shellquote"
)

// token is one shell word as far as it is known before the command runs.
type token struct {
	// s is the word after quote removal. For a computed word it is the
	// literal text before the first computed part.
	s string
	// dyn: the word contains something computed at run time (parameter,
	// command or arithmetic substitution, $'…', brace expansion).
	dyn bool
	// split: the word may turn into several words or none (an unquoted
	// expansion, an unquoted glob, a brace expansion).
	split bool
	// glob: s contains unquoted glob characters.
	glob bool
}

// wordToken reads w. home and cwd serve tilde expansion (~ and ~+).
func wordToken(w *syntax.Word, home, cwd string) token {
	var t token
	var b strings.Builder
	var shape strings.Builder // unquoted text; quoted text as 'q', for brace detection
	stop := false             // a computed part was seen: b holds the prefix
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				end := strings.IndexByte(v, '/')
				if end < 0 {
					end = len(v)
				}
				switch {
				case v[:end] == "~" && home != "":
					v = home + v[end:]
				case v[:end] == "~+" && cwd != "":
					v = cwd + v[end:]
				default:
					t.dyn = true
					stop = true
				}
			}
			for j := 0; j < len(v); j++ {
				c := v[j]
				switch c {
				case '\\':
					if j+1 < len(v) {
						j++
						if !stop {
							b.WriteByte(v[j])
						}
						shape.WriteByte('q')
					}
					continue
				case '*', '?':
					t.glob = true
					t.split = true
				case '[':
					// A bracket expression needs its ]: a lone [ (the
					// test command) is a literal.
					if strings.IndexByte(v[j+1:], ']') >= 0 {
						t.glob = true
						t.split = true
					}
				}
				if !stop {
					b.WriteByte(c)
				}
				shape.WriteByte(c)
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				t.dyn = true
				stop = true
			} else if !stop {
				b.WriteString(p.Value)
			}
			shape.WriteByte('q')
		case *syntax.DblQuoted:
			if p.Dollar {
				t.dyn = true
				stop = true
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					t.dyn = true
					stop = true
					continue
				}
				if !stop {
					b.WriteString(unescapeDouble(lit.Value))
				}
			}
			shape.WriteByte('q')
		default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, ExtGlob, BraceExp
			t.dyn = true
			if _, ok := p.(*syntax.ProcSubst); !ok {
				t.split = true
			}
			stop = true
			shape.WriteByte('$')
		}
	}
	if hasBraceExpansion(shape.String()) {
		t.dyn, t.split = true, true
		if i := strings.IndexByte(b.String(), '{'); i >= 0 {
			s := b.String()[:i]
			b.Reset()
			b.WriteString(s)
		}
	}
	t.s = b.String()
	return t
}

// unescapeDouble removes the backslashes that double quotes honour.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// hasBraceExpansion reports an unquoted {a,b} or {a..b}.
func hasBraceExpansion(s string) bool {
	for {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			return false
		}
		close := strings.IndexByte(s[open:], '}')
		if close < 0 {
			return false
		}
		inner := s[open+1 : open+close]
		if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
			return true
		}
		s = s[open+1:]
	}
}

// patternWord writes s as a pattern word that matches exactly s.
func patternWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\*?;") {
		return s
	}
	return shellquote.Quote(s)
}

func render(toks []token) string {
	var parts []string
	for _, t := range toks {
		switch {
		case t.dyn:
			parts = append(parts, t.s+"…")
		default:
			parts = append(parts, t.s)
		}
	}
	return strings.Join(parts, " ")
}
