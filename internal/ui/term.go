package ui

import (
	"io"
	"os"
	"strings"
	"unicode"

	"golang.org/x/term"

	"github.com/harness-dev/harness/internal/termsafe"
)

// Term is an output terminal: where to write, whether colours are on, and
// its current size.
type Term struct {
	Out   io.Writer
	TTY   bool // Out is a terminal: redraws and the spinner are allowed
	Style Style
	// Size returns the current width and height; it is called on every
	// redraw so a resized window is followed without SIGWINCH plumbing.
	Size func() (width, height int)
}

// NewTerm describes out. Colours are on when out is a terminal, getenv
// has no NO_COLOR (or an empty one, per no-color.org) and TERM is not
// "dumb".
// getenv may be nil.
func NewTerm(out io.Writer, getenv func(string) string) *Term {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	t := &Term{Out: out, Size: func() (int, int) { return 80, 24 }}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t.TTY = true
		fd := int(f.Fd())
		t.Size = func() (int, int) {
			w, h, err := term.GetSize(fd)
			if err != nil || w <= 0 || h <= 0 {
				return 80, 24
			}
			return w, h
		}
	}
	_, noColor := lookupNonEmpty(getenv, "NO_COLOR")
	t.Style = Style{Color: t.TTY && !noColor && getenv("TERM") != "dumb"}
	return t
}

func lookupNonEmpty(getenv func(string) string, k string) (string, bool) {
	v := getenv(k)
	return v, v != ""
}

// Width returns the current width, at least 8 so layouts never collapse.
func (t *Term) Width() int {
	w, _ := t.Size()
	if w < 8 {
		w = 8
	}
	return w
}

// Height returns the current height, at least 5.
func (t *Term) Height() int {
	_, h := t.Size()
	if h < 5 {
		h = 5
	}
	return h
}

// Style applies SGR attributes when Color is true and returns text
// unchanged otherwise.
type Style struct{ Color bool }

func (s Style) sgr(code, text string) string {
	if !s.Color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Text attributes.
func (s Style) Bold(t string) string      { return s.sgr("1", t) }
func (s Style) Dim(t string) string       { return s.sgr("2", t) }
func (s Style) Italic(t string) string    { return s.sgr("3", t) }
func (s Style) Underline(t string) string { return s.sgr("4", t) }
func (s Style) Red(t string) string       { return s.sgr("31", t) }
func (s Style) Green(t string) string     { return s.sgr("32", t) }
func (s Style) Yellow(t string) string    { return s.sgr("33", t) }
func (s Style) Blue(t string) string      { return s.sgr("34", t) }
func (s Style) Magenta(t string) string   { return s.sgr("35", t) }
func (s Style) Cyan(t string) string      { return s.sgr("36", t) }
func (s Style) BoldCyan(t string) string  { return s.sgr("1;36", t) }
func (s Style) BoldRed(t string) string   { return s.sgr("1;31", t) }

// StripANSI removes SGR and other CSI sequences, for measuring width.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == 0x1b {
			i = skipEscape(rs, i)
			continue
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

// StringWidth is the number of terminal columns s occupies, ignoring escape
// sequences.
func StringWidth(s string) int {
	n := 0
	for _, r := range StripANSI(s) {
		n += RuneWidth(r)
	}
	return n
}

// RuneWidth is the number of columns r occupies: 0 for combining marks and
// controls, 2 for East Asian wide characters and most emoji, 1 otherwise.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b || r == 0x200d || (r >= 0xfe00 && r <= 0xfe0f):
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

func isWide(r rune) bool {
	for _, w := range wideRanges {
		if r < w[0] {
			return false
		}
		if r <= w[1] {
			return true
		}
	}
	return false
}

// wideRanges are the main East Asian Wide/Fullwidth blocks and emoji
// blocks, sorted.
var wideRanges = [][2]rune{
	{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec}, {0x23f0, 0x23f0}, {0x23f3, 0x23f3},
	{0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267f, 0x267f}, {0x2693, 0x2693}, {0x26a1, 0x26a1},
	{0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5}, {0x26ce, 0x26ce}, {0x26d4, 0x26d4}, {0x26ea, 0x26ea},
	{0x26f2, 0x26f3}, {0x26f5, 0x26f5}, {0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b},
	{0x2728, 0x2728}, {0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55},
	{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xa960, 0xa97f},
	{0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6},
	{0x16fe0, 0x16fe4}, {0x17000, 0x18cff}, {0x1b000, 0x1b2ff}, {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf},
	{0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251}, {0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff},
	{0x1f7e0, 0x1f7eb}, {0x1f90c, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
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
	for _, r := range s {
		rw := RuneWidth(r)
		if n+rw > w-1 {
			break
		}
		b.WriteRune(r)
		n += rw
	}
	return b.String() + "…"
}

// TruncateLeft keeps the last w columns of s (the end of a path is what
// names it).
func TruncateLeft(s string, w int) string {
	rs := []rune(s)
	n, i := 0, len(rs)
	for i > 0 && n+RuneWidth(rs[i-1]) <= w {
		i--
		n += RuneWidth(rs[i])
	}
	return string(rs[i:])
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

// Sanitize is termsafe.Text, under the name the renderer's callers know.
func Sanitize(s string) string { return termsafe.Text(s) }

// SanitizeLine is termsafe.Line.
func SanitizeLine(s string) string { return termsafe.Line(s) }

// Visible is termsafe.Visible.
func Visible(s string) string { return termsafe.Visible(s) }

func skipEscape(rs []rune, i int) int { return termsafe.SkipEscape(rs, i) }
