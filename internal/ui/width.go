package ui

import (
	"strings"

	"github.com/rivo/uniseg"
)

// Display width, measured by grapheme cluster (github.com/rivo/uniseg,
// UAX #29 and the East Asian Width property): an emoji ZWJ sequence, a
// flag or a letter with its combining marks is one cluster, as wide as a
// terminal draws it, and text is never cut inside one.

// StringWidth is the number of terminal columns s occupies, ignoring escape
// sequences.
func StringWidth(s string) int {
	return uniseg.StringWidth(StripANSI(s))
}

// RuneWidth is the number of columns r occupies on its own: 0 for
// combining marks, joiners and controls, 2 for East Asian wide characters
// and emoji, 1 otherwise. Text is measured by cluster (StringWidth,
// eachCluster); this is for code that edits a rune at a time.
func RuneWidth(r rune) int {
	if r < 0x20 || r == 0x7f {
		return 0
	}
	if r < 0x300 {
		return 1
	}
	return uniseg.StringWidth(string(r))
}

// eachCluster calls f with each grapheme cluster of plain text s (no
// escapes) and its width; f returns false to stop.
func eachCluster(s string, f func(cluster string, width int) bool) {
	state := -1
	for len(s) > 0 {
		var c string
		var w int
		c, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		if c == "\n" || c == "\r\n" {
			w = 0
		}
		if !f(c, w) {
			return
		}
	}
}

// Truncate cuts s (plain text, no escapes) to at most w columns, adding "…"
// when it cut.
func Truncate(s string, w int) string {
	if StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return "…"
	}
	n := 0
	var b strings.Builder
	eachCluster(s, func(c string, cw int) bool {
		if n+cw > w-1 {
			return false
		}
		b.WriteString(c)
		n += cw
		return true
	})
	return b.String() + "…"
}

// TruncateLeft keeps the last w columns of s (the end of a path is what
// names it).
func TruncateLeft(s string, w int) string {
	var cs []string
	var ws []int
	eachCluster(s, func(c string, cw int) bool {
		cs, ws = append(cs, c), append(ws, cw)
		return true
	})
	n, i := 0, len(cs)
	for i > 0 && n+ws[i-1] <= w {
		i--
		n += ws[i]
	}
	return strings.Join(cs[i:], "")
}

// Wrap breaks plain text into lines of at most width columns at spaces; a
// word longer than width gets a line of its own.
func Wrap(text string, width int) []string {
	width = max(width, 10)
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line, lw := "", 0
		for _, w := range strings.Fields(para) {
			ww := StringWidth(w)
			switch {
			case lw == 0:
				line, lw = w, ww
			case lw+1+ww <= width:
				line, lw = line+" "+w, lw+1+ww
			default:
				lines = append(lines, line)
				line, lw = w, ww
			}
		}
		lines = append(lines, line)
	}
	return lines
}
