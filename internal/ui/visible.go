package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible makes text that an agent or a command controls safe to print
// on a terminal as plain lines: every control character (C0, DEL, C1),
// escape sequences included, is shown as a visible escape (\e, \r, \x07,
// \u009b) instead of reaching the terminal, where it could erase or
// rewrite a warning, move the cursor or set the clipboard (OSC 52).
// Newlines and tabs stay as they are; invalid UTF-8 bytes show as \xNN.
// Unlike Sanitize, which drops what it cannot render in a transcript,
// Visible keeps a trace of every such byte, so a path that was made to
// look like another still looks different.
func Visible(s string) string {
	if !needsVisible(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

func needsVisible(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
		i += n
	}
	return false
}
