package ui

import (
	"slices"
	"strings"
)

// What was shown, kept as functions of the width, so a resize redraws
// the screen at the new width (Reflow).

// item is one thing shown, re-rendered at the new width by Reflow.
type item func(width int) string

// maxItems bounds what Reflow can redraw.
const maxItems = 400

// remember records an item shown at the current width; what was written
// literally since the last item is recorded first, as it was.
func (r *Renderer) remember(it item) {
	r.flushLit()
	r.items = append(r.items, it)
	if len(r.items) > maxItems {
		r.items = append([]item(nil), r.items[len(r.items)-maxItems/2:]...)
	}
}

// flushLit makes what was written literally (tool lines, notices,
// command output, newlines) an item of its own.
func (r *Renderer) flushLit() {
	if r.lit.Len() == 0 {
		return
	}
	s := r.lit.String()
	r.lit.Reset()
	r.items = append(r.items, func(int) string { return s })
}

// Remember records text shown by someone else (the editor's submitted
// line) so Reflow redraws it too; it ends its line.
func (r *Renderer) Remember(text string) {
	r.RememberFunc(func(int) string { return text })
}

// RememberFunc records what someone else showed (the permission box) as
// a function of the width, so Reflow draws it again for the new width; it
// ends its line.
func (r *Renderer) RememberFunc(f func(width int) string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.remember(func(w int) string { return endLine(f(w)) })
}

// PrintFunc is Print of f(width), and Reflow draws f again at the new
// width (the banner, the status line).
func (r *Renderer) PrintFunc(f func(width int) string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.showQueue()
	r.spin.stop()
	r.closeBlocks()
	r.newline()
	r.show(func(w int) string { return endLine(f(w)) })
}

// show writes f at the current width and remembers f for Reflow.
func (r *Renderer) show(f item) {
	defer func(e bool) { r.echoing = e }(r.echoing)
	r.echoing = true
	r.write(f(r.t.Width()))
	r.remember(f)
}

func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// Reflow redraws the screen after a resize: what was shown last is drawn
// again over the screen, as much as fits, re-rendered for the new width
// (so a reply is re-wrapped, never cut mid-word by the terminal). The
// caller then draws its prompt below. The screen is cleared without
// pushing it into the scrollback (see clearScreen): the scrollback keeps
// one copy of what was shown, not one more at every resize.
func (r *Renderer) Reflow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.t.TTY || r.paused {
		return
	}
	r.flushLit()
	w, h := r.t.Width(), r.t.Height()
	var parts []string
	rows := 0
	for i := len(r.items) - 1; i >= 0 && rows < h; i-- {
		s := r.items[i](w)
		rows += textRows(StripANSI(s), w)
		parts = append(parts, s)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	// Only the last screenful, less the prompt's row: the rest would
	// scroll into the history again.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var keep []string
	for i, n := len(lines)-1, 0; i >= 0; i-- {
		n += max(1, textRows(StripANSI(lines[i]), w))
		if n > h-1 {
			break
		}
		keep = append(keep, lines[i])
	}
	slices.Reverse(keep)
	out := clearScreen + strings.Join(keep, "\n")
	if len(keep) > 0 {
		out += "\n"
	}
	// Called at the prompt, where the terminal is raw: a newline does not
	// return the carriage by itself.
	r.writeRaw(strings.ReplaceAll(out, "\n", "\r\n"))
	r.col0, r.tail, r.tailOff = true, "", false
}

// clearScreen clears the screen and homes the cursor. Not with ED 2, nor
// ED 0 from the top-left cell, which tmux (its scroll-on-clear option, on
// by default) and other terminals push into the scrollback first: the top
// row is erased by itself, the rest by ED 0 from the second row.
const clearScreen = "\x1b[H\x1b[2K\x1b[2;1H\x1b[J\x1b[H"

// textRows counts the terminal rows raw occupies when printed from column
// 0 at width w, followed by a newline if it lacks one.
func textRows(raw string, w int) int {
	return rowsOf(advanceRows(raw, w, 0, 0))
}
