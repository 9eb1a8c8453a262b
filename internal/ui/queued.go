package ui

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The queue row: keys the user typed while a turn runs, shown dimmed
// above the spinner until the turn ends and they become the next prompt.

const spinHint = "· Esc interrupts"

// SetQueued shows the keys the user typed while the turn runs, on a row
// of its own below the output ("queued: …"): under the spinner, or under
// the reply while it streams, redrawn as the reply grows so the two never
// mix. The keys wait at the next prompt (a line ended with Enter is sent
// by itself). "" clears the row.
func (r *Renderer) SetQueued(typed string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hideQueue()
	r.queued = queuedText(typed)
	r.spin.below = r.queueRows()
	if _, spinning := r.spin.running(); spinning {
		r.spin.draw()
		return
	}
	r.showQueue()
}

// queuedText is typed keys as one readable line: an Enter shows as ⏎ (a
// Ctrl-J, which starts a new line in the prompt, as ↵),
// key sequences (arrows, paste brackets) and control keys as nothing.
func queuedText(typed string) string {
	var b strings.Builder
	for i := 0; i < len(typed); i++ {
		c := typed[i]
		switch {
		case c == '\r':
			b.WriteString(queuedEnter + " ")
		case c == '\n': // Ctrl-J: a new line in the prompt
			b.WriteString("↵")
		case c == 0x1b:
			i += escapeLen(typed[i:]) - 1
		case c < 0x20 || c == 0x7f:
		default:
			r, size := utf8.DecodeRuneInString(typed[i:])
			if r != utf8.RuneError {
				b.WriteString(Sanitize(string(r)))
			}
			i += size - 1
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// escapeLen is the length of the key sequence at the start of s (which
// starts with Esc): CSI ("\x1b[" parameters, final byte), SS3 ("\x1bO"
// and a byte), Alt and a key, or a lone Esc.
func escapeLen(s string) int {
	switch {
	case len(s) < 2:
		return 1
	case s[1] == '[':
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
		}
		return len(s)
	case s[1] == 'O' && len(s) > 2:
		return 3
	}
	return 2
}

// queueRows is the queued text as rows to show below the output: a blank
// row for air, then the text, its end kept when it is too long.
func (r *Renderer) queueRows() []string {
	if r.queued == "" || !r.t.TTY {
		return nil
	}
	st, w := r.t.Style, r.t.Width()
	label := "queued: "
	hint := " (waits at the prompt; Enter sends it after this turn)"
	if strings.HasSuffix(r.queued, queuedEnter) {
		hint = " (sent when this turn ends)"
	}
	room := w - 1 - StringWidth(label)
	text := r.queued
	if StringWidth(text) > room {
		text = "…" + TruncateLeft(text, room-1)
	}
	row := st.Dim(label) + text
	if StringWidth(label+text+hint) <= w-1 {
		row += st.Dim(hint)
	}
	return []string{"", row}
}

// queuedEnter is how an Enter typed ahead shows in the queued text.
const queuedEnter = " ⏎"

// showQueue draws the queued rows below the output when nothing else
// holds that place (the spinner draws them itself; a prompt owns the
// terminal while paused). The cursor then sits on the queued row; the next
// write takes it away first (hideQueue) and puts the cursor back.
func (r *Renderer) showQueue() {
	if r.qShown != nil || r.queued == "" || !r.inTurn || r.paused || !r.t.TTY || r.tailOff {
		return
	}
	if _, spinning := r.spin.running(); spinning {
		return
	}
	rows := r.queueRows()
	w, h := r.t.Width(), r.t.Height()
	// The tail is redrawn from its first row: it must still be on screen.
	if textRows(StripANSI(r.tail), w)+len(rows) >= h {
		return
	}
	var b strings.Builder
	if r.tail != "" {
		b.WriteString("\r\n") // off the tail's row
	}
	for i, l := range rows {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("\x1b[K" + l)
	}
	io.WriteString(r.t.Out, b.String())
	r.qShown = rows
}

// hideQueue erases the queued rows and puts the cursor back where the
// output ended: on the tail's first row, which is written again (the same
// text over itself, so the terminal's cursor and pending wrap are as they
// were).
func (r *Renderer) hideQueue() {
	if r.qShown == nil {
		return
	}
	// Counted at the width now: a terminal that was resized meanwhile
	// has re-wrapped the rows.
	w := r.t.Width()
	up := 0
	for _, l := range r.qShown[1:] {
		up += max(1, textRows(StripANSI(l), w))
	}
	if r.tail != "" {
		up += textRows(StripANSI(r.tail), w)
	}
	r.qShown = nil
	var b strings.Builder
	if up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r\x1b[J" + r.tail)
	io.WriteString(r.t.Out, b.String())
}
