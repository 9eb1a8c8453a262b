package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

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
		r.write(Fit(r.t.Style.Yellow("↻ "+msg), r.t.Width()) + "\n")
		r.spinStart("retrying")
	}
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
		r.write(Fit(r.t.Style.BoldRed("‼ "+msg), r.t.Width()) + "\n")
	} else {
		r.write(Fit(r.t.Style.Yellow("• "+msg), r.t.Width()) + "\n")
	}
	if spinning {
		r.spin.start(label)
	}
}

// Print writes a block of already-styled text from the interactive loop
// (a command's output), on its own lines, each wrapped at word
// boundaries to the width (Fit), again after a resize.
func (r *Renderer) Print(s string) {
	r.PrintFunc(func(w int) string { return Fit(s, w) })
}
