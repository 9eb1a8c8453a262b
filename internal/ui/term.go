package ui

import (
	"io"
	"os"
	"strings"

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

// Sanitize is termsafe.Text, under the name the renderer's callers know.
func Sanitize(s string) string { return termsafe.Text(s) }

// SanitizeLine is termsafe.Line.
func SanitizeLine(s string) string { return termsafe.Line(s) }

// Visible is termsafe.Visible.
func Visible(s string) string { return termsafe.Visible(s) }

func skipEscape(rs []rune, i int) int { return termsafe.SkipEscape(rs, i) }
