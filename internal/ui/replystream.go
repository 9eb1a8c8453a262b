package ui

import (
	"fmt"
	"strings"
)

// Streaming a reply: text is drawn raw as it arrives, then replaced by
// its rendered Markdown once each block (or the reply) completes.

// dimLines dims each line separately so a wrapped or multi-line delta keeps
// its style.
func dimLines(st Style, s string) string {
	return colourLines(func(x string) string { return st.Dim(st.Italic(x)) }, s)
}

// closeBlocks ends an open thinking block and the open text block.
func (r *Renderer) closeBlocks() {
	if r.thinking {
		r.thinking = false
		r.newline()
	}
	r.finishText()
}

// finishText ends the open text block: what is still raw is rendered.
func (r *Renderer) finishText() {
	raw := r.seg.String()
	if raw == "" {
		return
	}
	if r.md.rich {
		r.advance(true)
	}
	r.seg.Reset()
	r.md = mdStream{}
	r.newline()
	st := r.t.Style
	r.remember(func(w int) string { return endLine(RenderMarkdown(st, raw, w)) })
}

// mdStream is the state of a text block being rendered as it streams:
// complete blocks (a paragraph, a list item, a table, a heading) are
// rendered and printed once they are known to be complete; a fenced code
// block is printed line by line, so one of any length never waits; only
// the block still streaming is shown raw, and it is erased when its
// rendering replaces it.
type mdStream struct {
	rich  bool // a terminal: render; otherwise the raw text is the output
	done  int  // bytes of the block's text already rendered
	shown int  // bytes after done shown raw on screen
	row   int  // the cursor's row below the raw text's first row
	col   int  // ... and column
	width int  // the width row and col were counted at
	held  bool // the raw text grew too tall to erase: the rest is not echoed

	fence, lang, indent string // an open fenced block, printed line by line
	inFence             bool
}

// advance renders what became complete and echoes the rest raw. final
// says the block's text is all there.
func (r *Renderer) advance(final bool) {
	defer func(e bool) { r.echoing = e }(r.echoing)
	r.echoing = true
	raw := r.seg.String()
	st, w := r.t.Style, r.t.Width()
	m := &r.md
	for m.done < len(raw) {
		pend := raw[m.done:]
		if m.inFence {
			i := strings.IndexByte(pend, '\n')
			if i < 0 && !final {
				break
			}
			line, used := pend, len(pend)
			if i >= 0 {
				line, used = pend[:i], i+1
			}
			r.eraseRaw()
			if closesFence(line, m.fence) {
				r.write(m.indent + st.Dim("╰") + "\n")
				m.inFence = false
			} else {
				r.write(strings.Join(codeRows(st, m.indent, Highlight(st, m.lang, line), w), "\n") + "\n")
			}
			m.done += used
			continue
		}
		complete := pend
		if !final {
			i := strings.LastIndexByte(pend, '\n')
			if i < 0 {
				break
			}
			complete = pend[:i+1]
		}
		lines := strings.Split(strings.TrimSuffix(complete, "\n"), "\n")
		if k, _ := blockKind(lines); k == blockFence {
			fence, lang, _ := openFence(lines[0])
			m.fence, m.lang, m.indent, m.inFence = fence, lang, leadingSpaces(lines[0]), true
			r.eraseRaw()
			r.write(fenceHead(st, m.indent, lang) + "\n")
			m.done += min(len(lines[0])+1, len(pend))
			continue
		}
		n, ok := nextBlock(lines, final)
		if !ok {
			break
		}
		used := 0
		for _, l := range lines[:n] {
			used += len(l) + 1
		}
		used = min(used, len(pend))
		r.eraseRaw()
		r.write(renderBlock(st, lines[:n], w))
		m.done += used
	}
	if final {
		r.eraseRaw()
		if m.inFence {
			r.write(m.indent + st.Dim("╰") + "\n")
			m.inFence = false
		}
		return
	}
	r.echoRaw(raw[m.done:])
}

// echoRaw shows the streaming block's new text raw, unless the block has
// grown too tall to be erased later (its top would scroll away): then the
// rest waits for its rendering.
func (r *Renderer) echoRaw(pend string) {
	defer func(e bool) { r.echoing = e }(r.echoing)
	r.echoing = true
	m := &r.md
	if m.held || len(pend) <= m.shown {
		return
	}
	w := r.t.Width()
	row, col := m.row, m.col
	if m.shown == 0 || w != m.width {
		row, col = advanceRows(pend, w, 0, 0)
	} else {
		row, col = advanceRows(pend[m.shown:], w, row, col)
	}
	if rowsOf(row, col) >= r.t.Height()-2 {
		m.held = true
		return
	}
	r.write(pend[m.shown:])
	m.shown, m.row, m.col, m.width = len(pend), row, col, w
}

// advanceRows follows the cursor through s printed from (row, col) at
// width w: a newline starts a row, a character that does not fit wraps.
func advanceRows(s string, w, row, col int) (int, int) {
	for _, c := range s {
		if c == '\n' {
			row, col = row+1, 0
			continue
		}
		cw := RuneWidth(c)
		if col+cw > w {
			row, col = row+1, 0
		}
		col += cw
	}
	return row, col
}

// rowsOf is how many rows text occupies when the cursor ended at (row,
// col): the last row counts when something is on it.
func rowsOf(row, col int) int {
	if col > 0 {
		return row + 1
	}
	return row
}

// eraseRaw removes the raw text of the streaming block from the screen.
func (r *Renderer) eraseRaw() {
	m := &r.md
	if m.shown == 0 {
		m.held = false
		return
	}
	// The cursor is on the last row written (or below it, after a
	// newline): row counts the rows above it.
	if m.row > 0 {
		r.writeRaw(fmt.Sprintf("\x1b[%dA", m.row))
	}
	r.writeRaw("\r\x1b[J")
	r.col0, r.tail = true, ""
	m.shown, m.row, m.col, m.held = 0, 0, 0, false
}
