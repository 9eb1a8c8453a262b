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
	var e sedEffect
	i := 0
	n := len(src)
	skipSpace := func() {
		for i < n && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
	// regex reads a delimited regex or replacement starting after delim.
	regex := func(delim byte) bool {
		for i < n {
			c := src[i]
			switch {
			case c == '\\':
				i += 2
				continue
			case c == delim:
				i++
				return true
			case c == '\n' && delim != '\n':
				return false
			}
			i++
		}
		return false
	}
	toEOL := func() string {
		start := i
		for i < n && src[i] != '\n' {
			i++
		}
		return src[start:i]
	}
	address := func() bool {
		switch {
		case i < n && src[i] >= '0' && src[i] <= '9':
			for i < n && (src[i] >= '0' && src[i] <= '9' || src[i] == '~') {
				i++
			}
		case i < n && src[i] == '$':
			i++
		case i < n && src[i] == '/':
			i++
			if !regex('/') {
				return false
			}
			for i < n && (src[i] == 'I' || src[i] == 'M') {
				i++
			}
		case i+1 < n && src[i] == '\\':
			d := src[i+1]
			i += 2
			if !regex(d) {
				return false
			}
			for i < n && (src[i] == 'I' || src[i] == 'M') {
				i++
			}
		}
		return true
	}
	for i < n {
		skipSpace()
		if i >= n {
			break
		}
		switch src[i] {
		case '\n', ';', '}':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		if !address() {
			e.bad = "an address is not closed"
			return e
		}
		if i < n && src[i] == ',' {
			i++
			if i < n && (src[i] == '+' || src[i] == '~') {
				i++
			}
			if !address() {
				e.bad = "an address is not closed"
				return e
			}
		}
		skipSpace()
		for i < n && (src[i] == '!' || src[i] == ' ') {
			i++
		}
		if i >= n {
			break
		}
		c := src[i]
		i++
		switch c {
		case '{', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			skipSpace()
			for i < n && src[i] >= '0' && src[i] <= '9' {
				i++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line; a trailing backslash continues it.
			for i < n {
				line := toEOL()
				if !strings.HasSuffix(line, `\`) || i >= n {
					break
				}
				i++
			}
		case ':', 'b', 't', 'T':
			for i < n && src[i] != ';' && src[i] != '\n' {
				i++
			}
		case 'r', 'R':
			skipSpace()
			toEOL()
		case 'w', 'W':
			skipSpace()
			e.writes = append(e.writes, toEOL())
		case 'e':
			e.runs = true
			toEOL()
		case 'v':
			for i < n && src[i] != ';' && src[i] != '\n' && src[i] != '}' {
				i++
			}
		case 's', 'y':
			if i >= n || src[i] == '\n' || src[i] == '\\' {
				e.bad = "an s or y command has no delimiter"
				return e
			}
			d := src[i]
			i++
			for range 2 { // the pattern, then the replacement
				if !regex(d) {
					e.bad = "an s or y command is not closed"
					return e
				}
			}
			if c == 'y' {
				break
			}
			for i < n && src[i] != ';' && src[i] != '\n' && src[i] != '}' {
				f := src[i]
				i++
				switch {
				case f == 'e':
					e.runs = true
				case f == 'w':
					skipSpace()
					e.writes = append(e.writes, toEOL())
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' ||
					f >= '0' && f <= '9' || f == ' ' || f == '\t':
				default:
					e.bad = "the s command has an unknown flag " + string(f)
					return e
				}
			}
		default:
			e.bad = "unknown command " + string(c)
			return e
		}
	}
	return e
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
