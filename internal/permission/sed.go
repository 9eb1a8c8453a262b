package permission

import "strings"

// sedEffect is what one sed script does besides printing.
type sedEffect struct {
	writes []string // files named by w, W and the s///w flag
	runs   bool     // e command or s///e flag
	bad    string   // the script is not one the scanner understands
}

// scanSed reads a sed script the way GNU sed does, enough to find every
// command that writes a file or runs one: addresses, !, { }, the text of
// a/i/c, labels, s and y with any delimiter, and the flags of s. Whatever
// it does not understand it reports, and the caller asks.
func scanSed(src string) sedEffect {
	s := &sedScanner{src: src}
	for s.i < len(s.src) && s.e.bad == "" {
		s.command()
	}
	return s.e
}

// sedScanner walks one script; each method reads one piece of the grammar
// from i on and records what it finds in e. A non-empty e.bad stops it.
type sedScanner struct {
	src string
	i   int
	e   sedEffect
}

func (s *sedScanner) more() bool { return s.i < len(s.src) }

// at reports whether the next byte is one of set.
func (s *sedScanner) at(set string) bool {
	return s.more() && strings.IndexByte(set, s.src[s.i]) >= 0
}

func (s *sedScanner) skipSpace() {
	for s.at(" \t") {
		s.i++
	}
}

// skipUntil moves to the next byte in stop, or to the end.
func (s *sedScanner) skipUntil(stop string) {
	for s.more() && strings.IndexByte(stop, s.src[s.i]) < 0 {
		s.i++
	}
}

func (s *sedScanner) skipDigits() {
	for s.more() && isDigit(s.src[s.i]) {
		s.i++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (s *sedScanner) toEOL() string {
	start := s.i
	s.skipUntil("\n")
	return s.src[start:s.i]
}

// regex reads a delimited regex or replacement starting after delim.
func (s *sedScanner) regex(delim byte) bool {
	for s.more() {
		c := s.src[s.i]
		switch {
		case c == '\\':
			s.i += 2
			continue
		case c == delim:
			s.i++
			return true
		case c == '\n' && delim != '\n':
			return false
		}
		s.i++
	}
	return false
}

// address reads one address, if there is one: a line number (with ~step),
// $, /regex/ or \cregexc, the last two with their I and M flags.
func (s *sedScanner) address() bool {
	src, i := s.src, s.i
	switch {
	case s.more() && isDigit(src[i]):
		for s.more() && (isDigit(s.src[s.i]) || s.src[s.i] == '~') {
			s.i++
		}
		return true
	case s.at("$"):
		s.i++
		return true
	case s.at("/"):
		s.i++
		return s.regexAddress('/')
	case i+1 < len(src) && src[i] == '\\':
		s.i += 2
		return s.regexAddress(src[i+1])
	}
	return true
}

func (s *sedScanner) regexAddress(delim byte) bool {
	if !s.regex(delim) {
		return false
	}
	for s.at("IM") {
		s.i++
	}
	return true
}

// addresses reads an address or a range of them (a,b  a,+n  a,~n).
func (s *sedScanner) addresses() bool {
	if !s.address() {
		return false
	}
	if !s.at(",") {
		return true
	}
	s.i++
	if s.at("+~") {
		s.i++
	}
	return s.address()
}

// command reads one command with its addresses, or skips a separator or
// comment.
func (s *sedScanner) command() {
	s.skipSpace()
	if !s.more() {
		return
	}
	switch s.src[s.i] {
	case '\n', ';', '}':
		s.i++
		return
	case '#':
		s.toEOL()
		return
	}
	if !s.addresses() {
		s.e.bad = "an address is not closed"
		return
	}
	s.skipSpace()
	for s.at("! ") {
		s.i++
	}
	if !s.more() {
		return
	}
	c := s.src[s.i]
	s.i++
	s.body(c)
}

// body reads what follows command letter c.
func (s *sedScanner) body(c byte) {
	switch c {
	case '{', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	case 'l', 'L', 'q', 'Q':
		s.skipSpace()
		s.skipDigits()
	case 'a', 'i', 'c':
		s.text()
	case ':', 'b', 't', 'T':
		s.skipUntil(";\n")
	case 'r', 'R':
		s.skipSpace()
		s.toEOL()
	case 'w', 'W':
		s.skipSpace()
		s.e.writes = append(s.e.writes, s.toEOL())
	case 'e':
		s.e.runs = true
		s.toEOL()
	case 'v':
		s.skipUntil(";\n}")
	case 's', 'y':
		s.substitute(c)
	default:
		s.e.bad = "unknown command " + string(c)
	}
}

// text reads the text of a, i or c: to the end of the line, and a trailing
// backslash continues it.
func (s *sedScanner) text() {
	for s.more() {
		line := s.toEOL()
		if !strings.HasSuffix(line, `\`) || !s.more() {
			return
		}
		s.i++
	}
}

// substitute reads s or y: the delimiter, pattern and replacement, then
// for s its flags, where e and w are what matter.
func (s *sedScanner) substitute(c byte) {
	if !s.more() || s.at("\n\\") {
		s.e.bad = "an s or y command has no delimiter"
		return
	}
	d := s.src[s.i]
	s.i++
	for range 2 { // the pattern, then the replacement
		if !s.regex(d) {
			s.e.bad = "an s or y command is not closed"
			return
		}
	}
	if c == 'y' {
		return
	}
	for s.more() && !s.at(";\n}") {
		f := s.src[s.i]
		s.i++
		switch {
		case f == 'e':
			s.e.runs = true
		case f == 'w':
			s.skipSpace()
			s.e.writes = append(s.e.writes, s.toEOL())
		case strings.IndexByte("gpiImM \t", f) >= 0 || isDigit(f):
		default:
			s.e.bad = "the s command has an unknown flag " + string(f)
			return
		}
	}
}

// sed: read-only unless the script writes (w, W, s///w), runs (e, s///e)
// or -i rewrites the files.
func (sc *shellCheck) sed(args []token) {
	uses, ops := specSed.parse(args)
	var scripts []token
	inPlace, sandboxed := false, false
	for _, u := range uses {
		if u.o == nil {
			sc.ask("ask: sed has an option computed at run time (" + u.spell + ")")
			continue
		}
		switch u.o.role {
		case rScript:
			scripts = append(scripts, u.val)
		case rAsk:
			sc.ask("ask: sed " + u.spell + " " + u.o.why)
		case rInPlace:
			inPlace = true
		}
		if u.o.long == "sandbox" {
			sandboxed = true
		}
	}
	if len(scripts) == 0 && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	for _, s := range scripts {
		if s.dyn {
			sc.ask("ask: sed script computed at run time")
			continue
		}
		e := scanSed(s.s)
		switch {
		case e.bad != "":
			sc.ask("ask: sed script not understood (" + e.bad + ")")
		case e.runs && !sandboxed:
			sc.ask("ask: the sed script runs a command (e)")
		}
		if !sandboxed {
			for _, w := range e.writes {
				sc.writeAs(token{s: w}, "sed w")
			}
		}
	}
	if inPlace {
		for _, t := range ops {
			sc.writeAs(t, "sed -i")
		}
	}
}
