package termsafe

import (
	"io"
	"strings"
	"unicode/utf8"
)

// isControl reports whether r is a character that must not reach a
// terminal as it is: C0 and C1 controls, DEL, and the bidirectional
// embedding, override and isolate characters, which reorder what is shown
// (a file name that reads as another one, "Trojan Source").
func isControl(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Text removes terminal control sequences and control characters other
// than newline and tab from text that came from a model or a tool, turns
// tabs into four spaces so widths are predictable, and replaces bytes that
// are not UTF-8 (a lone 0x9b is CSI to a terminal in 8-bit mode) with
// U+FFFD.
func Text(s string) string {
	if !needsSanitize(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s) // invalid bytes become U+FFFD here
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r == 0x1b:
			i = SkipEscape(rs, i)
		case r == '\r':
			// A lone CR would overwrite the line; CRLF becomes LF.
		case isControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Line is for a string that must stay on one line: a file name, a
// server's command or argument, a setting. Every control (newline and tab
// included) is shown as a visible escape (\n, \t, \e, \x07, \u009b,
// \u202e) and an invalid byte as \xNN, so a name can neither forge a line
// of the output nor be made to look like another name.
func Line(s string) string { return show(s, false) }

// Visible makes text that an agent or a command controls safe to print on
// a terminal as plain lines: like Line, but newlines and tabs stay
// as they are. Unlike Text, which drops what it cannot render in a
// transcript, Visible keeps a trace of every such byte, so a path that was
// made to look like another still looks different.
func Visible(s string) string { return show(s, true) }

func show(s string, keepLines bool) string {
	if !needsShow(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case isControl(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsShow(s string, keepLines bool) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if isControl(r) && !(keepLines && (r == '\n' || r == '\t')) {
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// escapeRune is r as an escape: \n, \t, \r, \e, \xNN below 0x80, \uNNNN
// above.
func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	case 0x1b:
		return `\e`
	}
	if r < 0x80 {
		return `\x` + string(hexDigits[r>>4]) + string(hexDigits[r&0xf])
	}
	return `\u` + string(hexDigits[r>>12&0xf]) + string(hexDigits[r>>8&0xf]) + string(hexDigits[r>>4&0xf]) + string(hexDigits[r&0xf])
}

func needsSanitize(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if isControl(r) && r != '\n' {
			return true
		}
	}
	return false
}

// SkipEscape returns the index of the last rune of the escape sequence
// that starts at rs[i] (an ESC): the renderer's measuring and styling use
// the same idea of where a sequence ends as the sanitiser.
func SkipEscape(rs []rune, i int) int {
	if i+1 >= len(rs) {
		return i
	}
	switch rs[i+1] {
	case '[': // CSI: parameters then one final byte in 0x40..0x7e
		j := i + 2
		for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
			j++
		}
		return min(j, len(rs)-1)
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST
		j := i + 2
		for j < len(rs) {
			if rs[j] == 0x07 {
				return j
			}
			if rs[j] == 0x1b && j+1 < len(rs) && rs[j+1] == '\\' {
				return j + 1
			}
			j++
		}
		return len(rs) - 1
	}
	return i + 1
}

// Guard returns a writer that passes text to w with every control sequence
// removed but SGR (colours, bold) and erasing the line (CR, ESC [ K), which
// are all that harness's plain subcommands print of their own; newline and
// tab pass, bytes that are not UTF-8 become U+FFFD. A sequence split
// across writes is held until it ends, so nothing passes in pieces; Close
// (or Flush) drops an unfinished one.
//
// It is the backstop behind Text and Line, not a replacement: a forgotten
// string cannot set the window title, write the clipboard (OSC 52), move
// the cursor or clear the screen, but it can still colour text.
func Guard(w io.Writer) *GuardWriter { return &GuardWriter{w: w} }

// GuardWriter is the writer Guard returns.
type GuardWriter struct {
	w       io.Writer
	pending []byte // an unfinished escape sequence or UTF-8 character
}

// maxPending bounds a held sequence: a longer one is not something harness
// wrote and is dropped whole.
const maxPending = 4096

func (g *GuardWriter) Write(p []byte) (int, error) {
	buf := append(g.pending, p...)
	g.pending = nil
	out := make([]byte, 0, len(buf))
	i := 0
	for i < len(buf) {
		c := buf[i]
		if c == 0x1b {
			end, complete := escapeEnd(buf, i)
			if !complete {
				if len(buf)-i <= maxPending {
					g.pending = append([]byte(nil), buf[i:]...)
				}
				break
			}
			if allowedEscape(buf[i:end]) {
				out = append(out, buf[i:end]...)
			}
			i = end
			continue
		}
		if c < utf8.RuneSelf {
			if c == '\n' || c == '\t' || c == '\r' || !isControl(rune(c)) {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			g.pending = append([]byte(nil), buf[i:]...)
			break
		}
		r, n := utf8.DecodeRune(buf[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case isControl(r):
		default:
			out = append(out, buf[i:i+n]...)
		}
		i += n
	}
	if _, err := g.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush drops an unfinished sequence; the guard is ready for more.
func (g *GuardWriter) Flush() { g.pending = nil }

// escapeEnd returns the end of the escape sequence starting at b[i], and
// whether it is complete in b.
func escapeEnd(b []byte, i int) (int, bool) {
	if i+1 >= len(b) {
		return len(b), false
	}
	switch b[i+1] {
	case '[':
		for j := i + 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1, true
			}
		}
		return len(b), false
	case ']', 'P', '_', '^', 'X':
		for j := i + 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1, true
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2, true
			}
		}
		return len(b), false
	}
	return i + 2, true
}

// allowedEscape: SGR (ESC [ digits and ; then m) and erase in line
// (ESC [ 0-2 K).
func allowedEscape(seq []byte) bool {
	if len(seq) < 3 || seq[1] != '[' {
		return false
	}
	params, final := seq[2:len(seq)-1], seq[len(seq)-1]
	for _, c := range params {
		if (c < '0' || c > '9') && c != ';' {
			return false
		}
	}
	switch final {
	case 'm':
		return true
	case 'K':
		return len(params) <= 1
	}
	return false
}

// Unwrap returns the writer the guard writes to, for asking whether it is
// a terminal.
func (g *GuardWriter) Unwrap() io.Writer { return g.w }
