package ui

import (
	"context"
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"
)

// Page shows lines in the terminal's alternate screen, a page at a time,
// and returns when the user leaves it (q, Esc or Enter): the scrollback
// is untouched. Keys: Space, PgDn, j/Down move on; b, PgUp, k/Up move
// back; g and G go to the start and the end. It reads keys from in, so
// no other reader competes for them.
func Page(ctx context.Context, in *Input, t *Term, lines []string) error {
	if f, ok := in.File(); ok && term.IsTerminal(int(f.Fd())) {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return err
		}
		defer term.Restore(int(f.Fd()), old) //nolint:errcheck // best effort on the way out
	}
	io.WriteString(t.Out, "\x1b[?1049h\x1b[?25l")
	defer io.WriteString(t.Out, "\x1b[?25h\x1b[?1049l")
	top := 0
	for {
		h := t.Height() - 1
		top = max(0, min(top, len(lines)-h))
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		for i := top; i < min(len(lines), top+h); i++ {
			b.WriteString(lines[i] + "\x1b[0m\r\n")
		}
		end := min(len(lines), top+h)
		b.WriteString(fmt.Sprintf("\x1b[%d;1H", h+1))
		b.WriteString(t.Style.Dim(fmt.Sprintf("rows %d–%d of %d · Space/b page · j/k row · q back to the prompt", top+1, end, len(lines))))
		io.WriteString(t.Out, b.String())
		k, err := readKey(ctx, in)
		if err != nil {
			return err
		}
		switch {
		case k.kind == keyEscape || k.kind == keyEnter || k.kind == keyInterrupt || k.kind == keyRune && (k.r == 'q' || k.r == 'Q'):
			return nil
		case k.kind == keyPageDown || k.kind == keyRune && k.r == ' ':
			top += h - 1
		case k.kind == keyPageUp || k.kind == keyRune && k.r == 'b':
			top -= h - 1
		case k.kind == keyDown || k.kind == keyRune && k.r == 'j':
			top++
		case k.kind == keyUp || k.kind == keyRune && k.r == 'k':
			top--
		case k.kind == keyHome || k.kind == keyRune && k.r == 'g':
			top = 0
		case k.kind == keyEnd || k.kind == keyRune && k.r == 'G':
			top = len(lines)
		}
	}
}
