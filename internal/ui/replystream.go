package ui

import (
	"fmt"
	"strings"

	"github.com/yuin/goldmark/ast"
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
	held  bool // the raw text grew too tall to erase, or holds a cluster terminals measure differently: the rest is not echoed
	blank bool // the last row the stream printed is blank

	fence, lang string // an open fenced block, printed line by line
	inFence     bool
}

// advance renders what became complete and echoes the rest raw. final
// says the block's text is all there.
func (r *Renderer) advance(final bool) {
	defer func(e bool) { r.echoing = e }(r.echoing)
	r.echoing = true
	raw := r.seg.String()
	m := &r.md
	for m.done < len(raw) {
		pend := raw[m.done:]
		if m.inFence {
			if !r.fenceLine(pend, final) {
				break
			}
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
		if !final && r.openFence(complete) {
			continue
		}
		n := len(complete)
		if !final {
			n = completeUpTo(complete)
		}
		if n == 0 {
			break
		}
		r.eraseRaw()
		out := renderChunk(r.t.Style, complete[:n], r.t.Width())
		if out == "\n" && (m.done == 0 || m.blank) {
			out = "" // blank lines: one blank row between blocks, none first
		}
		if out != "" {
			r.write(out)
			m.blank = strings.HasSuffix(out, "\n\n") || out == "\n"
		}
		m.done += n
	}
	if final {
		r.eraseRaw()
		if m.inFence {
			r.write(r.t.Style.Dim("╰") + "\n")
			m.inFence = false
		}
		return
	}
	r.echoRaw(raw[m.done:])
}

// openFence starts printing a fenced code block line by line when one
// opens at the start of complete, so one of any length never waits.
func (r *Renderer) openFence(complete string) bool {
	first, _, _ := strings.Cut(complete, "\n")
	fence := fenceOf(first)
	if len(fence) < 3 {
		return false
	}
	fc, ok := parseMarkdown([]byte(first + "\n")).FirstChild().(*ast.FencedCodeBlock)
	if !ok {
		return false
	}
	m := &r.md
	m.fence, m.lang, m.inFence = fence, string(fc.Language([]byte(first+"\n"))), true
	r.eraseRaw()
	r.write(fenceHead(r.t.Style, m.lang) + "\n")
	m.done += len(first) + 1
	return true
}

// fenceLine prints the next line of an open fenced block, or its end;
// false when no complete line is there yet.
func (r *Renderer) fenceLine(pend string, final bool) bool {
	m := &r.md
	st := r.t.Style
	i := strings.IndexByte(pend, '\n')
	if i < 0 && !final {
		return false
	}
	line, used := pend, len(pend)
	if i >= 0 {
		line, used = pend[:i], i+1
	}
	r.eraseRaw()
	m.blank = false
	if closesFence(line, m.fence) {
		r.write(st.Dim("╰") + "\n")
		m.inFence = false
	} else {
		r.write(strings.Join(codeRows(st, Highlight(st, m.lang, line), r.t.Width()), "\n") + "\n")
	}
	m.done += used
	return true
}

// renderChunk renders complete blocks cut from a streaming reply, with
// the blank row the whole reply's rendering has after them when a blank
// line ends them; blank lines alone are one blank row.
func renderChunk(st Style, chunk string, width int) string {
	out := RenderMarkdown(st, chunk, width)
	if endsBlank(chunk) {
		out += "\n"
	}
	return out
}

// unsureWidth reports whether s holds a cluster whose width terminals
// disagree on (emoji sequences joined by ZWJ, flags, emoji variation
// selectors and skin tones): raw text with one is not echoed, since
// erasing it needs its row count; its rendering replaces it when the
// block is complete.
func unsureWidth(s string) bool {
	for _, r := range s {
		if r == 0x200d || r == 0xfe0f || r >= 0x1f1e6 && r <= 0x1f1ff || r >= 0x1f3fb && r <= 0x1f3ff {
			return true
		}
	}
	return false
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
	if rowsOf(row, col) >= r.t.Height()-2 || unsureWidth(pend[m.shown:]) {
		m.held = true
		return
	}
	r.write(pend[m.shown:])
	m.shown, m.row, m.col, m.width = len(pend), row, col, w
}

// advanceRows follows the cursor through s printed from (row, col) at
// width w: a newline starts a row, a character that does not fit wraps.
func advanceRows(s string, w, row, col int) (int, int) {
	eachCluster(s, func(c string, cw int) bool {
		if c == "\n" {
			row, col = row+1, 0
			return true
		}
		if col+cw > w {
			row, col = row+1, 0
		}
		col += cw
		return true
	})
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
