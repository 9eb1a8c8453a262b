package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

// Renderer shows one session's activity: it satisfies the agent's Observer
// (OnEvent, OnToolStart, OnToolEnd, OnReply, OnNotice) and adds StartTurn
// and EndTurn for the interactive loop. It is safe for concurrent use.
//
// Text is written as it streams. When the text block completes it is
// replaced in place by its Markdown rendering, if it is still entirely on
// screen; otherwise the raw text stays (scrollback cannot be rewritten).
type Renderer struct {
	t     *Term
	Meter *Meter // updated on every reply; read by the status line

	mu       sync.Mutex
	col0     bool            // the cursor is at the start of a line
	seg      strings.Builder // raw text of the open text block
	md       mdStream        // how much of seg is rendered, and what is shown raw
	thinking bool            // a thinking block is open
	items    []item          // what was shown, for Reflow
	running  []llm.Block     // calls started and not ended, for the prompt's preview
	pausedAt time.Time       // when the running Pause began
	waited   time.Duration   // time spent in prompts since the last tool started
	live     string          // the tail of the running command's output
	results  []toolResult    // the last results, for /expand
	spin     spinner
	tools    int    // tool calls this turn
	lastTool string // ID of the call whose line was printed last
	paused   bool   // a prompt owns the terminal: no spinner, output held
	held     strings.Builder

	inTurn  bool            // between StartTurn and EndTurn
	queued  string          // what the user typed ahead during the turn, readable
	qShown  []string        // the queued rows on screen below the output, nil when none
	tail    string          // what was written since the last newline, to redraw after the queued row
	lit     strings.Builder // written since the last item, for Reflow
	echoing bool            // writing the streaming text block: Reflow has it as an item
	tailOff bool            // the tail grew too long to keep: no queued row until the next newline
}

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

// maxTail bounds the text kept to redraw after the queued row.
const maxTail = 16 << 10

// track follows what was written for hideQueue: the text after the last
// newline.
func (r *Renderer) track(s string) {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		r.tail, r.tailOff = s[i+1:], false
	} else if !r.tailOff {
		r.tail += s
	}
	if len(r.tail) > maxTail {
		r.tail, r.tailOff = "", true
	}
}

// NewRenderer returns a renderer writing to t and accounting into m (a new
// Meter when nil).
func NewRenderer(t *Term, m *Meter) *Renderer {
	if m == nil {
		m = &Meter{}
	}
	r := &Renderer{t: t, Meter: m, col0: true}
	r.spin = spinner{mu: &r.mu, write: r.writeRaw, now: time.Now, tick: 100 * time.Millisecond,
		hint: t.Style.Dim(spinHint), width: t.Width}
	return r
}

// writeRaw writes control sequences (redraws, the spinner) that the
// caller keeps track of.
func (r *Renderer) writeRaw(s string) {
	r.hideQueue()
	io.WriteString(r.t.Out, s)
}

// write prints s (already safe) and tracks whether a line was ended.
// While a prompt owns the terminal (concurrent tools, notices) output is
// held and printed when the prompt is answered.
func (r *Renderer) write(s string) {
	if s == "" {
		return
	}
	if r.paused {
		r.held.WriteString(s)
	} else {
		r.hideQueue()
		io.WriteString(r.t.Out, s)
		r.track(s)
		if !r.echoing && r.t.TTY {
			r.lit.WriteString(s)
		}
	}
	r.col0 = strings.HasSuffix(s, "\n")
}

func (r *Renderer) newline() {
	if !r.col0 {
		r.write("\n")
	}
}

func (r *Renderer) spinStart(label string) {
	if r.t.TTY && !r.paused {
		r.hideQueue()
		r.spin.below = r.queueRows()
		r.spin.start(r.t.Style.Dim(label))
	}
}

// StartTurn marks the start of a turn: a spinner shows the wait for the
// model's first token.
func (r *Renderer) StartTurn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools = 0
	r.inTurn = true
	r.newline()
	if r.t.TTY {
		r.write("\n") // air between the prompt and the reply
	}
	r.spinStart("thinking")
}

// EndTurn closes whatever is open (text, spinner) and leaves the cursor on
// a fresh line. interrupted adds a note that the turn was cancelled.
func (r *Renderer) EndTurn(interrupted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.stop()
	r.closeBlocks()
	r.hideQueue()
	r.inTurn, r.queued, r.spin.below = false, "", nil
	if interrupted {
		r.write(r.t.Style.Yellow("⏹ interrupted") + r.t.Style.Dim(" — what completed is kept; type to continue") + "\n")
	}
}

// Pause hands the terminal to a prompt: open blocks are closed and the
// spinner stops until Resume.
func (r *Renderer) Pause() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.stop()
	r.closeBlocks()
	r.hideQueue()
	r.newline()
	r.paused = true
	r.pausedAt = time.Now()
	r.col0 = true
	r.lastTool = "" // the result will need its call's line again
}

// RunningCall returns the started call of tool whose input names path
// (the call a permission prompt is about), or the only running call of
// that tool.
func (r *Renderer) RunningCall(tool, path string) (llm.Block, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var found []llm.Block
	for _, c := range r.running {
		if c.Name == tool {
			found = append(found, c)
		}
	}
	for _, c := range found {
		var in struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(c.Input, &in) == nil && in.Path != "" && (in.Path == path || strings.HasSuffix(path, "/"+strings.TrimPrefix(filepath.Clean(in.Path), "./"))) {
			return c, true
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return llm.Block{}, false
}

// Resume ends a Pause; the spinner comes back for the running tool.
func (r *Renderer) Resume() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused = false
	if !r.pausedAt.IsZero() {
		r.waited += time.Since(r.pausedAt)
		r.pausedAt = time.Time{}
	}
	r.tail, r.tailOff = "", false // the prompt's editor ended its line
	if r.held.Len() > 0 {
		io.WriteString(r.t.Out, r.held.String())
		r.track(r.held.String())
		if r.t.TTY {
			r.lit.WriteString(r.held.String())
		}
		r.held.Reset()
	} else {
		r.col0 = true
	}
	r.spinStart("running")
}

// Close stops the spinner and waits for its goroutine.
func (r *Renderer) Close() {
	r.mu.Lock()
	r.spin.stop()
	r.mu.Unlock()
	r.spin.wg.Wait()
}

// OnEvent shows a streamed piece of a reply.
func (r *Renderer) OnEvent(e llm.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.showQueue()
	switch e.Type {
	case llm.EventText:
		r.spin.stop()
		if r.thinking {
			r.thinking = false
			r.newline()
		}
		text := Sanitize(e.Text)
		if r.seg.Len() == 0 {
			text = strings.TrimLeft(text, "\n")
			if text == "" {
				return
			}
			r.newline()
			r.md = mdStream{rich: r.t.TTY && !r.paused}
		}
		r.seg.WriteString(text)
		if !r.md.rich {
			r.write(text)
			return
		}
		if strings.Contains(text, "\n") {
			r.advance(false)
		} else {
			// Nothing can have completed: just show it (no rescan of
			// the block, so a long line costs nothing per delta).
			r.echoRaw(r.seg.String()[r.md.done:])
		}
	case llm.EventThinking:
		r.spin.stop()
		r.finishText()
		text := Sanitize(e.Text)
		if !r.thinking {
			text = strings.TrimLeft(text, "\n")
			if text == "" {
				return
			}
			r.thinking = true
			r.newline()
			r.write(r.t.Style.Dim(r.t.Style.Italic("✻ ")))
		}
		r.write(dimLines(r.t.Style, text))
	case llm.EventToolCall:
		r.closeBlocks()
	case llm.EventRetry:
		r.spin.stop()
		if r.seg.Len() > 0 {
			r.newline()
			r.write(r.t.Style.Dim("(reply cut off; the retry starts over)") + "\n")
			r.seg.Reset()
		}
		r.thinking = false
		r.newline()
		msg := "retrying"
		if e.Wait > 0 {
			msg = fmt.Sprintf("retrying in %s (attempt %d)", formatElapsed(e.Wait), e.Try)
		}
		if e.Err != nil {
			msg += ": " + firstLine(Sanitize(e.Err.Error()))
		}
		r.write(r.t.Style.Yellow("↻ "+msg) + "\n")
		r.spinStart("retrying")
	}
}

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

// OnToolStart shows a tool call as one line and a spinner under it.
func (r *Renderer) OnToolStart(call llm.Block) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.stop()
	r.closeBlocks()
	r.tools++
	r.lastTool = call.ID
	r.running = append(r.running, call)
	if len(r.running) == 1 {
		r.waited = 0
	}
	st := r.t.Style
	r.show(func(w int) string { return ToolLine(st, call, w) + "\n" })
	r.spinStart("running")
}

// liveRows is how many of a running command's last lines are shown.
const liveRows = 4

// OnToolOutput shows a running command's last lines above its spinner,
// updated as output comes (drawn by the spinner's next tick).
func (r *Renderer) OnToolOutput(call llm.Block, chunk string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live += chunk
	if len(r.live) > 8192 {
		r.live = r.live[len(r.live)-4096:]
	}
	if !r.t.TTY {
		return
	}
	lines := strings.Split(strings.TrimRight(Sanitize(r.live), "\n"), "\n")
	if len(lines) > liveRows {
		lines = lines[len(lines)-liveRows:]
	}
	w := r.t.Width()
	above := make([]string, 0, len(lines))
	for _, l := range lines {
		above = append(above, "    "+r.t.Style.Dim(Truncate(l, w-6)))
	}
	r.spin.above = above
}

// toolResult is a result kept for /expand.
type toolResult struct {
	call, result llm.Block
}

// LastResult returns the n-th last tool result (1 is the last) as shown
// under its call, whole; ok is false when there is none.
func (r *Renderer) LastResult(n int) (call, result llm.Block, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 || n > len(r.results) {
		return llm.Block{}, llm.Block{}, false
	}
	tr := r.results[len(r.results)-n]
	return tr.call, tr.result, true
}

// OnToolEnd shows a short result under the tool's line, then waits for the
// model again.
func (r *Renderer) OnToolEnd(call, result llm.Block, elapsed time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.stop()
	r.spin.above, r.live = nil, ""
	r.newline()
	r.results = append(r.results, toolResult{call, result})
	if len(r.results) > 20 {
		r.results = r.results[1:]
	}
	for i, c := range r.running {
		if c.ID == call.ID {
			r.running = append(r.running[:i:i], r.running[i+1:]...)
			break
		}
	}
	// The time a prompt waited for the user is not the tool's.
	elapsed = max(0, elapsed-r.waited)
	if len(r.running) == 0 {
		r.waited = 0
	}
	st := r.t.Style
	if call.ID != r.lastTool {
		// Calls ran concurrently: name the call this result belongs to.
		r.show(func(w int) string { return ToolLine(st, call, w) + "\n" })
		r.lastTool = call.ID
	}
	r.show(func(w int) string { return ToolResult(st, call, result, elapsed, w) })
	r.spinStart("thinking")
}

// OnReply records usage and closes the reply's blocks.
func (r *Renderer) OnReply(reply *llm.Reply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.showQueue()
	r.spin.stop()
	r.closeBlocks()
	if reply == nil {
		return
	}
	r.Meter.Add(reply)
	if reply.StopReason == llm.StopMaxTokens {
		r.write(r.t.Style.Yellow("! the reply hit the output token limit and was cut") + "\n")
	}
}

// OnNotice prints a notice from the harness (compaction, retries, sandbox
// warnings). Warnings are shown in bold red.
func (r *Renderer) OnNotice(n notice.Notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.showQueue()
	label, spinning := r.spin.running()
	r.spin.stop()
	r.closeBlocks()
	// Visible, not Sanitize: a notice names paths and commands the agent
	// chose, and a byte hidden from a warning must still show.
	msg := Visible(n.Text)
	if n.Level == notice.LevelWarning {
		r.write(r.t.Style.BoldRed("‼ "+msg) + "\n")
	} else {
		r.write(r.t.Style.Yellow("• "+msg) + "\n")
	}
	if spinning {
		r.spin.start(label)
	}
}

// Print writes a block of already-styled text from the interactive loop
// (a command's output), on its own lines.
func (r *Renderer) Print(s string) {
	r.PrintFunc(func(int) string { return s })
}

// toolArgKeys are the input fields that best describe a call, in order.
var toolArgKeys = []string{"command", "pattern", "path", "file_path", "query", "url", "description", "prompt", "name"}

// ToolLine is the one-line form of a call: "⚙ bash  go test ./...".
func ToolLine(st Style, call llm.Block, width int) string {
	name := Sanitize(call.Name)
	arg := toolArg(call)
	room := width - StringWidth(name) - 4
	arg = Truncate(arg, max(room, 10))
	if call.Name == "bash" {
		arg = Highlight(st, "sh", arg)
	} else {
		arg = st.Cyan(arg)
	}
	return st.Magenta("⚙ ") + st.Bold(name) + "  " + arg
}

func toolArg(call llm.Block) string {
	var m map[string]any
	if json.Unmarshal(call.Input, &m) != nil {
		return oneLine(Sanitize(string(call.Input)))
	}
	for _, k := range toolArgKeys {
		if v, ok := m[k].(string); ok && v != "" {
			s := v
			if k == "pattern" {
				if p, ok := m["path"].(string); ok && p != "" {
					s += "  in " + p
				}
			}
			return oneLine(Sanitize(s))
		}
	}
	if items, ok := m["todos"].([]any); ok {
		return fmt.Sprintf("%d items", len(items))
	}
	if len(m) == 0 {
		return ""
	}
	return oneLine(Sanitize(string(call.Input)))
}

// oneLine joins a multi-line argument with " ⏎ " so it fits one row.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var (
	exitRe   = regexp.MustCompile(`\[exit code: (-?\d+)\]\s*$`)
	markerRe = regexp.MustCompile(`^\[(output limit|timed out|WARNING|harness[: ]|the user interrupted|lines \d+-\d+ of \d+;|\d+ more matches|a .* appeared;)`)
	capRe    = regexp.MustCompile(`\[harness cap: \d+ of \d+ chars cut here \(lines (\d+)-(\d+) of (\d+)\)`)
	rangeRe  = regexp.MustCompile(`(?m)^\[lines (\d+)-(\d+) of (\d+);`)
	limitRe  = regexp.MustCompile(`(?m)^\[output limit reached: (\d+) bytes from the middle`)
)

// resultPreviewLines is how many lines of output are shown under a call.
const resultPreviewLines = 3

// ToolResult is the short form of a result, one to five lines under the
// call: status (exit code, error), the first lines, and how much was cut.
func ToolResult(st Style, call, result llm.Block, elapsed time.Duration, width int) string {
	content := Sanitize(result.Content)
	var status string
	body := content
	if m := exitRe.FindStringSubmatchIndex(content); m != nil {
		code := content[m[2]:m[3]]
		body = strings.TrimRight(content[:m[0]], "\n")
		if code == "0" {
			status = st.Green("exit 0")
		} else {
			status = st.Red("exit " + code)
		}
	} else if result.IsError {
		status = st.Red("error")
	} else {
		status = st.Green("ok")
	}
	var lines, notes []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if markerRe.MatchString(l) {
			notes = append(notes, l)
			continue
		}
		lines = append(lines, l)
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	meta := append([]string{status}, resultSize(st, call, content, lines)...)
	meta = append(meta, formatElapsed(elapsed))
	var b strings.Builder
	b.WriteString("  " + st.Dim("↳ ") + strings.Join(meta, st.Dim(" · ")) + "\n")
	shown := lines
	if len(shown) > resultPreviewLines {
		shown = shown[:resultPreviewLines]
	}
	if result.IsError && len(lines) > 0 && call.Name != "bash" {
		// A failed file tool's message is its whole point: show it in red.
		b.WriteString("    " + st.Red(Truncate(lines[0], width-4)) + "\n")
		shown = shown[1:]
	}
	if call.Name == "edit_file" && !result.IsError {
		b.WriteString(editPreview(st, call, width))
	}
	for _, l := range shown {
		b.WriteString("    " + st.Dim(Truncate(l, width-4)) + "\n")
	}
	if more := len(lines) - resultPreviewLines; more > 0 {
		b.WriteString("    " + st.Dim(fmt.Sprintf("… %d more %s (/expand)", more, strings.TrimPrefix(plural(more, "line"), fmt.Sprint(more)+" "))) + "\n")
	}
	for _, n := range notes {
		b.WriteString("    " + st.Yellow(Truncate(n, width-4)) + "\n")
	}
	return b.String()
}

// resultSize is the size part of a result's summary, counted as the tool
// saw it, not as the capped text shows it: a capped output's marker gives
// its whole line count (the exit-code line and the harness's own notes in
// its tail are not output); a read of part of a file says "188 of 300
// lines"; output the sandbox dropped (from the middle: it keeps the start
// and the end) is named in bytes, since its lines
// were never seen. A one-line answer of a file tool has no size.
func resultSize(st Style, call llm.Block, content string, lines []string) []string {
	var out []string
	n := len(lines)
	cut := 0
	if m := capRe.FindStringSubmatchIndex(content); m != nil {
		a, _ := strconv.Atoi(content[m[2]:m[3]])
		b, _ := strconv.Atoi(content[m[4]:m[5]])
		total, _ := strconv.Atoi(content[m[6]:m[7]])
		cut = max(0, b-a)
		// The marker counts the original text's lines, a line after its
		// last newline included: take off that empty line and the lines
		// after the cut (all in the tail) that are not output.
		tail := content[m[1]:]
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:] // the rest of the marker's line
		}
		if strings.HasSuffix(tail, "\n") {
			total--
		}
		for _, l := range strings.Split(tail, "\n") {
			if markerRe.MatchString(l) || exitRe.MatchString(l) {
				total--
			}
		}
		n = max(total, 0)
	}
	switch m := rangeRe.FindStringSubmatch(content); {
	case m != nil:
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		out = append(out, fmt.Sprintf("%d of %s", b-a+1, plural(atoi(m[3]), "line")))
	case n == 1 && call.Name != "bash":
	case n > 0:
		out = append(out, plural(n, "line"))
	}
	if cut > 0 {
		out = append(out, st.Yellow(fmt.Sprintf("%d cut in the middle", cut)))
	}
	if m := limitRe.FindStringSubmatch(content); m != nil {
		out = append(out, st.Yellow(formatBytes(atoi(m[1]))+" dropped in the middle"))
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// formatBytes is a byte count for people: 512 B, 3.4 kB, 12 MB.
func formatBytes(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// editPreview shows an edit as a few removed and added lines.
func editPreview(st Style, call llm.Block, width int) string {
	var in struct {
		Old string `json:"old_string"`
		New string `json:"new_string"`
	}
	if json.Unmarshal(call.Input, &in) != nil {
		return ""
	}
	var b strings.Builder
	side := func(text, mark string, colour func(string) string) {
		if text == "" {
			return
		}
		lines := strings.Split(strings.TrimRight(Sanitize(text), "\n"), "\n")
		for i, l := range lines {
			if i == resultPreviewLines {
				b.WriteString("    " + st.Dim(fmt.Sprintf("  … %d more", len(lines)-i)) + "\n")
				break
			}
			b.WriteString("    " + colour(Truncate(mark+" "+l, width-4)) + "\n")
		}
	}
	side(in.Old, "-", st.Red)
	side(in.New, "+", st.Green)
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
