package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/term"
)

// Option is one answer of a Choose list.
type Option struct {
	Key   rune   // the key that picks it at once ('y'); also its number 1–9 does
	Label string // plain text, wrapped to the width
	// Typed asks for a line of text once picked (the reason of a refusal);
	// a printable key that picks nothing also starts that line.
	Typed bool
}

// Chosen is the answer to Choose: the index of the option and, for a
// Typed one, the text.
type Chosen struct {
	Index int
	Text  string
}

// enterSettle is how long after the list is drawn Enter is ignored: an
// Enter typed for what came before must not pick the default.
const enterSettle = 250 * time.Millisecond

// Choose shows opts one a row below the cursor, def highlighted, and
// reads one key: an option's key (or number) picks it at once, Up/Down
// move, Enter picks the highlighted one, Esc or Ctrl-C return
// ErrInterrupt. The list is redrawn in place and, once picked, replaced
// by one row naming the choice, so the scrollback keeps the answer, not
// the menu. Without a terminal it reads a line: a key, a number, or text
// for the Typed option.
func (e *Editor) Choose(ctx context.Context, opts []Option, def int) (Chosen, error) {
	return e.ChooseEsc(ctx, opts, def, "Esc stops the turn")
}

// ChooseEsc is Choose with the hint's words on Esc ("Esc: keep
// planning"), for a list whose Esc does not stop a turn.
func (e *Editor) ChooseEsc(ctx context.Context, opts []Option, def int, esc string) (Chosen, error) {
	if len(opts) == 0 {
		return Chosen{}, errors.New("nothing to choose from")
	}
	def = min(max(def, 0), len(opts)-1)
	f, isFile := e.in.File()
	tty := isFile && term.IsTerminal(int(f.Fd()))
	if !tty && !e.opts.ForceRaw {
		io.WriteString(e.t.Out, renderOptions(e.t.Style, opts, -1, e.t.Width(), esc))
		return e.choosePlain(ctx, opts)
	}
	if tty && !e.opts.ForceRaw {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			io.WriteString(e.t.Out, renderOptions(e.t.Style, opts, -1, e.t.Width(), esc))
			return e.choosePlain(ctx, opts)
		}
		defer term.Restore(int(f.Fd()), old) //nolint:errcheck // best effort on the way out
	}
	cur, rows, shown := def, 0, ""
	draw := func() {
		var b strings.Builder
		if rows > 0 {
			fmt.Fprintf(&b, "\x1b[%dA", rows)
		}
		b.WriteString("\r\x1b[J")
		text := renderOptions(e.t.Style, opts, cur, e.t.Width(), esc)
		b.WriteString(strings.ReplaceAll(text, "\n", "\r\n"))
		rows, shown = strings.Count(text, "\n"), text
		io.WriteString(e.t.Out, b.String())
	}
	clear := func() {
		if rows > 0 {
			fmt.Fprintf(e.t.Out, "\x1b[%dA", rows)
		}
		io.WriteString(e.t.Out, "\r\x1b[J")
		rows = 0
	}
	io.WriteString(e.t.Out, "\x1b[?25l") // no cursor blinking in the list
	defer io.WriteString(e.t.Out, "\x1b[?25h")
	draw()
	drawn := time.Now()
	for {
		k, err := readKey(ctx, e.in)
		if err != nil {
			clear()
			return Chosen{}, err
		}
		pick := -1
		switch k.kind {
		case keyUp, keyLeft:
			cur = (cur + len(opts) - 1) % len(opts)
		case keyDown, keyRight, keyTab:
			cur = (cur + 1) % len(opts)
		case keyEnter:
			if time.Since(drawn) >= enterSettle {
				pick = cur
			}
		case keyEscape, keyInterrupt, keyEOF:
			clear()
			return Chosen{}, ErrInterrupt
		case keyResize:
			// The terminal re-wrapped the rows drawn at the old width:
			// the list's first row is as many rows up as they take now.
			rows = textRows(StripANSI(shown), e.t.Width())
		case keyRune:
			pick = optionFor(opts, k.r)
			if pick < 0 && unicode.IsPrint(k.r) && k.r != ' ' {
				if t := typedOption(opts); t >= 0 {
					clear()
					return e.chooseTyped(ctx, opts, t, string(k.r))
				}
			}
		}
		if pick < 0 {
			draw()
			continue
		}
		clear()
		if opts[pick].Typed {
			return e.chooseTyped(ctx, opts, pick, "")
		}
		fmt.Fprintf(e.t.Out, "  %s %s\r\n", e.t.Style.BoldCyan("❯"), opts[pick].Label)
		return Chosen{Index: pick}, nil
	}
}

// chooseTyped reads the text of a Typed option, starting with first.
func (e *Editor) chooseTyped(ctx context.Context, opts []Option, i int, first string) (Chosen, error) {
	io.WriteString(e.t.Out, "\x1b[?25h")
	e.in.Unread([]byte(first))
	line, err := e.edit(ctx, "  "+e.t.Style.BoldCyan("❯")+" "+e.t.Style.Dim(strings.TrimSuffix(opts[i].Label, "…")+": "))
	if err != nil {
		return Chosen{}, err
	}
	return Chosen{Index: i, Text: strings.TrimSpace(line)}, nil
}

// choosePlain reads a line when input is not a terminal: an option's key
// or number picks it, other text goes to the Typed option; an empty line
// decides nothing and is read past.
func (e *Editor) choosePlain(ctx context.Context, opts []Option) (Chosen, error) {
	for {
		line, err := e.readPlain(ctx, "")
		if err != nil {
			return Chosen{}, err
		}
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		rs := []rune(s)
		if len(rs) == 1 {
			if i := optionFor(opts, rs[0]); i >= 0 {
				return Chosen{Index: i}, nil
			}
		}
		if t := typedOption(opts); t >= 0 {
			return Chosen{Index: t, Text: s}, nil
		}
	}
}

// optionFor is the option r picks (its key, case-insensitive, or its
// number), or -1.
func optionFor(opts []Option, r rune) int {
	for i, o := range opts {
		if o.Key != 0 && unicode.ToLower(o.Key) == unicode.ToLower(r) {
			return i
		}
	}
	if n, err := strconv.Atoi(string(r)); err == nil && n >= 1 && n <= len(opts) && n <= 9 {
		return n - 1
	}
	return -1
}

func typedOption(opts []Option) int {
	for i, o := range opts {
		if o.Typed {
			return i
		}
	}
	return -1
}

// renderOptions draws the list: the highlighted row marked ❯ and bold,
// each label wrapped under itself, and a hint row.
func renderOptions(st Style, opts []Option, cur, width int, esc string) string {
	var b strings.Builder
	for i, o := range opts {
		mark, key := "  ", fmt.Sprintf("%d", i+1)
		if o.Key != 0 {
			key = string(o.Key)
		}
		label := o.Label
		lines := wrapLine(label, max(10, width-8))
		for j, l := range lines {
			switch {
			case j > 0:
				b.WriteString("        ")
			case i == cur:
				mark = st.BoldCyan("❯ ")
				b.WriteString("  " + mark + st.Cyan(key) + "  ")
			default:
				b.WriteString("  " + mark + st.Dim(key) + "  ")
			}
			if i == cur {
				l = st.Bold(l)
			}
			b.WriteString(l + "\n")
		}
	}
	hint := "↑↓ Enter picks · or press its key · " + esc
	if cur < 0 {
		hint = "type its key and Enter" // read as a line: no terminal
	}
	if typedOption(opts) >= 0 {
		hint += " · other text: a reason to refuse"
	}
	for _, l := range Wrap(hint, max(10, width-4)) {
		b.WriteString("    " + st.Dim(l) + "\n")
	}
	return b.String()
}
