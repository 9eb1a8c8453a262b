package history

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// Maintain runs before each request inside a turn. It applies the strategy's
// in-turn strip and, when Tokens is over CompactAt × Window, drops the
// oldest tool results. It returns the edits applied, for the session log.
//
// The harness strategy strips in batches: only once the old tool output that
// a strip would remove is worth Config.StripBatch tokens, and then all of it
// at once. Each strip rewrites the prompt cache from the oldest stripped
// message on, so one batch every few steps costs one cache write where
// stripping every step (the reference) costs one every step, and the model
// meanwhile still sees the recent outputs in full.
func (h *History) Maintain() []Edit {
	var edits []Edit
	switch h.layers().InTurn {
	case StripAtStart:
		// At a boundary over the budget (the compaction at the turn's end
		// failed or is backing off), drop first, in one batch: that is
		// the layer for a count over COMPACT_AT. Then strip everything
		// old: the turn about to start has no reasoning to invalidate.
		// Mid-turn the strip runs in batches, when one pays for the
		// cache it rewrites (stripPays), each edit unthinking what
		// follows it and closing the open round (Edit.Close), so the
		// request keeps every thinking rule.
		if e, ok := h.fit(); ok {
			edits = append(edits, e)
		}
		if h.AtBoundary() || h.layers().InTurnWhenPays && h.stripPays() {
			if e, ok := h.strip(); ok {
				edits = append(edits, e)
			}
		}
		return edits
	case StripEveryStep:
		if e, ok := h.strip(); ok {
			edits = append(edits, e)
		}
	case StripBatched:
		if h.strippable() >= h.cfg.StripBatch {
			if e, ok := h.strip(); ok {
				edits = append(edits, e)
			}
		}
	}
	if e, ok := h.fit(); ok {
		edits = append(edits, e)
	}
	return edits
}

// EndTurn runs when the user's turn ends: it strips every old tool result
// (when the strategy says so) and sweeps the spill files. A failed sweep
// is not an edit; it is retried at the next EndTurn.
func (h *History) EndTurn() []Edit {
	var edits []Edit
	// The append strategy strips at the next turn's start instead, with
	// everything else it edits, so the cache breaks once.
	if h.layers().StripAtTurnEnd {
		if e, ok := h.strip(); ok {
			edits = append(edits, e)
		}
	}
	_ = h.Sweep()
	return edits
}

// AtBoundary reports whether the next request opens a user turn: the last
// message is the user's prompt, not tool results. Under the append strategy
// that is the only time history is edited without need, because the turn
// about to start has no reasoning yet to invalidate.
func (h *History) AtBoundary() bool {
	n := len(h.msgs)
	return n > 0 && h.msgs[n-1].Role == llm.RoleUser && !hasToolResult(h.msgs[n-1]) && !onlyFeedback(h.msgs[n-1])
}

// onlyFeedback reports whether m holds nothing but the harness's feedback
// on a malformed reply: the turn goes on.
func onlyFeedback(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Layer != LayerFeedback {
			return false
		}
	}
	return len(m.Blocks) > 0
}

// fitTarget is where a drop aims: halfway between CompactTo and CompactAt
// for a batched drop, else just under the budget.
func (h *History) fitTarget() int {
	if h.layers().Drop != DropBatched {
		return h.budget()
	}
	return int((h.cfg.CompactAt + h.cfg.CompactTo) / 2 * float64(h.cfg.Window))
}

// ForceDrop is for a provider's "context too long" error, when the count
// was wrong: it drops the oldest tool results until the count is under
// CompactTo × Window, or there is nothing left to drop. The agent logs the
// edits, compacts if NeedsCompact (or the retry fails again), and retries
// once.
func (h *History) ForceDrop() []Edit {
	if e, ok := h.dropTo(int(h.cfg.CompactTo*float64(h.cfg.Window)), len(h.msgs)-1); ok {
		return []Edit{e}
	}
	return nil
}

// Squeeze is the last resort of an overflow, when dropping and compacting
// left a request still over target because the latest tool results alone
// are too big: it cuts every tool result after the summary that is not
// stubbed yet to a head and a tail, sized so the count fits target, in one
// edit. The whole outputs stay in their spill files when they were capped.
func (h *History) Squeeze(target int) []Edit {
	over := h.Tokens() - target
	if over <= 0 {
		return nil
	}
	var cand []BlockEdit
	total := 0
	for i := h.floor + 1; i < len(h.msgs); i++ {
		for j, b := range h.msgs[i].Blocks {
			// A squeezed result may be squeezed again (a stub is too
			// short to qualify).
			if out, ok := output(b); ok && b.Layer != LayerDrop && len(out) > 2*h.cfg.Stub {
				cand = append(cand, BlockEdit{Message: i, Block: j})
				total += len(out)
			}
		}
	}
	if len(cand) == 0 {
		return nil
	}
	// Keep the same fraction of every result, never under a stub.
	keep := max(0.0, 1-float64(over*charsPerToken)*1.1/float64(total))
	e := Edit{Layer: LayerStrip, Unthink: h.appendOnly(), Close: h.appendOnly()}
	for _, c := range cand {
		b := h.msgs[c.Message].Blocks[c.Block]
		out, _ := output(b)
		n := max(int(float64(len(out))*keep), h.cfg.Stub)
		head := cutAt(out, n/2, false)
		tail := cutAt(out, n/2, true)
		if len(head)+len(tail) >= len(out) {
			continue
		}
		e.Blocks = append(e.Blocks, outputEdit(c.Message, c.Block, b, head+fmt.Sprintf("\n[harness: %d chars of this output were cut here to fit the provider's context window; re-run it with narrower output]\n", len(out)-len(head)-len(tail))+tail))
	}
	if len(e.Blocks) == 0 {
		return nil
	}
	if err := h.Apply(e); err != nil {
		panic("history: own squeeze edit rejected: " + err.Error())
	}
	return []Edit{e}
}

// stripBlock returns the stub of a tool result's content, and whether it is
// worth writing: only results not yet stripped or dropped, and only when the
// stub is shorter than what it replaces.
func (h *History) stripBlock(b llm.Block) (string, bool) {
	content, ok := output(b)
	if !ok || b.Image != nil || (b.Layer != "" && b.Layer != LayerCap && b.Layer != LayerClose) || len(content) <= h.cfg.Stub {
		return "", false
	}
	if failed(b, content) {
		// A failure's error text and exit code are at the end: keep the
		// head and the tail, so the model still knows why it failed.
		head := cutAt(content, h.cfg.Stub/2, false)
		tail := cutAt(content, h.cfg.Stub/2, true)
		if len(head)+len(tail) < len(content) {
			stub := head + fmt.Sprintf("\n[harness strip: %d chars of this old output removed here; run the tool again to see them]\n", len(content)-len(head)-len(tail)) + tail
			return stub, h.stubWorth(stub, content)
		}
	}
	head := cutAt(content, h.cfg.Stub, false)
	stub := head + fmt.Sprintf("\n[harness strip: %d more chars of this old output removed; run the tool again to see them]", len(content)-len(head))
	return stub, h.stubWorth(stub, content)
}

// imageStub is the edit that takes an old image out: an image block
// becomes a line of text naming it, a tool result loses its image and says
// so. An image costs hundreds to thousands of tokens each time it is sent,
// and the model has already looked at it.
func imageStub(i, j int, b llm.Block) (BlockEdit, bool) {
	switch {
	case b.Image == nil:
		return BlockEdit{}, false
	case b.Type == llm.BlockImage:
		return BlockEdit{Message: i, Block: j, Unimage: true,
			Text: "[harness strip: the " + b.Image.Describe() + " shown here earlier was removed; ask for it again (read_file on the file) to see it]"}, true
	case b.Type == llm.BlockToolResult:
		return BlockEdit{Message: i, Block: j, Unimage: true,
			Content: b.Content + "\n[harness strip: the " + b.Image.Describe() + " returned here was removed; read it again to see it]"}, true
	}
	return BlockEdit{}, false
}

// stubWorth reports whether stub is worth writing in place of content.
func (h *History) stubWorth(stub, content string) bool {
	if m := h.layers().StubMinSaving; m > 0 {
		// A stub that saves little hides output for next to nothing:
		// stub only when it saves at least that share of the result.
		return float64(len(stub)) <= (1-m)*float64(len(content))
	}
	return len(stub) < len(content)
}

// failed reports whether a tool result is a failure: marked as an error,
// or a command that ended with a non-zero exit code.
func failed(b llm.Block, content string) bool {
	if b.IsError || b.Layer == LayerClose && strings.HasPrefix(content, closedFailed) {
		return true
	}
	c := strings.TrimRight(content, "\n ")
	i := strings.LastIndex(c, "[exit code: ")
	return i >= 0 && strings.HasSuffix(c, "]") && c[i:] != "[exit code: 0]"
}

// Volatile reports how many trailing messages the strip will rewrite once
// they leave the latest two (llm.Request.Volatile): 2 when the latest
// assistant message carries a tool input large enough to stub, else 1 when
// the latest message holds a tool result longer than a stub, else 0. Only
// a strategy that says so (Layers.Volatile): the benchmark's references
// model harnesses that did not.
func (h *History) Volatile() int {
	if !h.layers().Volatile {
		return 0
	}
	n := len(h.msgs)
	folds := h.folds()
	for back := 2; back >= 1; back-- {
		i := n - back
		if i <= h.floor || i < 0 {
			continue
		}
		for j, b := range h.msgs[i].Blocks {
			_, okR := h.stripBlock(b)
			_, okI := h.stripInput(b)
			_, okT := h.trimBlock(i, b)
			_, okF := folds[[2]int{i, j}]
			_, okM := imageStub(i, j, b)
			if okR || okI || okT || okF || okM {
				return back
			}
		}
	}
	return 0
}

// strippable returns the tokens a strip would save now.
func (h *History) strippable() int {
	saved, _ := h.stripGain()
	return saved
}

// stripPays reports whether a strip inside a turn pays for the cache it
// rewrites: the tokens it saves are read from the cache by every request
// left in the turn (as many as the turn has had so far, and at least
// minTurnAhead: the best guess of what is left), against the cached
// tokens from the first message it edits to the latest round, which the
// provider must write again, at Config.RewriteCost reads each. The latest
// round (the reply just stored and its results) was in no request yet, so
// closing it rewrites nothing cached. A strip of the results that just
// left the latest round rewrites little and runs at once; results that
// save less than a long tail of messages after them costs to rewrite wait
// and go in one batch.
func (h *History) stripPays() bool {
	saved, from := h.stripGain()
	if saved <= 0 {
		return false
	}
	cached := h.TokensFrom(from) - h.TokensFrom(len(h.msgs)-2)
	rewrite := max(0, cached-saved)
	ahead := max(h.turnSteps, minTurnAhead)
	return float64(saved)*float64(ahead) >= h.cfg.RewriteCost*float64(rewrite)
}

// minTurnAhead is the fewest requests a turn is expected to have left: a
// turn of k steps is expected to go on for about k more (the most
// likely guess when nothing else is known), but an autonomous turn's
// first steps are rarely its last (the shared trajectories run 18 to 115
// steps, and still 24 left on average after 20).
const minTurnAhead = 20

// stripGain returns the tokens a strip would save now and the first
// message it would edit.
func (h *History) stripGain() (saved, from int) {
	from = len(h.msgs)
	folds := h.folds()
	for i := h.floor + 1; i < len(h.msgs)-2; i++ {
		for j, b := range h.msgs[i].Blocks {
			if stub, ok := h.stripBlock(b); ok {
				from = min(from, i)
				out, _ := output(b)
				saved += (len(out) - len(stub)) / charsPerToken
			}
			if _, ok := imageStub(i, j, b); ok {
				from = min(from, i)
				saved += b.Image.Tokens()
			}
			if in, ok := h.oldInput(b); ok {
				from = min(from, i)
				saved += (len(b.Input) - len(in)) / charsPerToken
			}
			if t, ok := h.trimBlock(i, b); ok {
				from = min(from, i)
				saved += (len(b.Text) - len(t)) / charsPerToken
			}
			if f, ok := folds[[2]int{i, j}]; ok {
				from = min(from, i)
				saved += (len(blockText(b)) - len(f)) / charsPerToken
			}
		}
	}
	return saved, from
}

// strip stubs every eligible tool result older than the latest two
// messages and after the summary.
func (h *History) strip() (Edit, bool) {
	e := Edit{Layer: LayerStrip, Unthink: h.appendOnly(), Close: h.appendOnly()}
	folds := h.folds()
	for i := h.floor + 1; i < len(h.msgs)-2; i++ {
		for j, b := range h.msgs[i].Blocks {
			if stub, ok := h.stripBlock(b); ok {
				e.Blocks = append(e.Blocks, outputEdit(i, j, b, stub))
			}
			if be, ok := imageStub(i, j, b); ok {
				e.Blocks = append(e.Blocks, be)
			}
			if in, ok := h.oldInput(b); ok {
				e.Blocks = append(e.Blocks, BlockEdit{Message: i, Block: j, Input: in})
			}
			if f, ok := folds[[2]int{i, j}]; ok {
				e.Blocks = append(e.Blocks, h.foldEdit(i, j, f))
			}
			if t, ok := h.trimBlock(i, b); ok {
				e.Blocks = append(e.Blocks, BlockEdit{Message: i, Block: j, Text: t, Layer: LayerTrim})
			}
		}
	}
	if len(e.Blocks) == 0 {
		return Edit{}, false
	}
	if err := h.Apply(e); err != nil {
		panic("history: own strip edit rejected: " + err.Error())
	}
	return e, true
}

// fit drops the oldest tool results when Tokens is over the budget. A
// batched drop goes down to halfway between CompactTo and CompactAt, so
// the cache breaks once for many steps; the reference drops just enough.
func (h *History) fit() (Edit, bool) {
	d := h.layers().Drop
	if d == DropNone || h.Tokens() <= h.budget() {
		return Edit{}, false
	}
	target := h.fitTarget()
	if d == DropBatched {
		// When dropping cannot get there (old outputs are stubs already)
		// and the request still fits, leave it to the compaction after the
		// reply: a drop would break the cache for little.
		if h.Tokens()-h.droppable(len(h.msgs)-2) > target && h.Tokens() < h.cfg.Window*19/20 {
			return Edit{}, false
		}
	}
	return h.dropTo(target, len(h.msgs)-2)
}

// droppable returns the tokens dropping every tool result before end would
// save.
func (h *History) droppable(end int) int {
	saved := 0
	for i := h.floor + 1; i < end; i++ {
		for _, b := range h.msgs[i].Blocks {
			if d := dropMarker(b); d != "" {
				out, _ := output(b)
				saved += (len(out) - len(d)) / charsPerToken
			}
		}
	}
	return saved
}

// dropMarker returns what a tool result becomes when dropped, or "" when
// it is not a tool result, already dropped, or too short to gain.
func dropMarker(b llm.Block) string {
	content, ok := output(b)
	if !ok || b.Layer == LayerDrop || b.Layer == LayerFeedback || (b.Type == llm.BlockText && b.Layer != LayerClose) {
		return "" // feedback is short, and folds of it point at it
	}
	d := fmt.Sprintf("[harness drop: this %d-char output was removed to fit the context window.]", len(content))
	if len(d) >= len(content) {
		return ""
	}
	return d
}

// dropTo empties the oldest tool results in messages before end until
// Tokens is at most target.
func (h *History) dropTo(target, end int) (Edit, bool) {
	e := Edit{Layer: LayerDrop, Unthink: h.appendOnly(), Close: h.appendOnly()}
	tokens := h.Tokens()
	for i := h.floor + 1; i < end && tokens > target; i++ {
		for j, b := range h.msgs[i].Blocks {
			dropped := dropMarker(b)
			if dropped == "" {
				continue
			}
			be := outputEdit(i, j, b, dropped)
			be.Unimage = b.Image != nil
			e.Blocks = append(e.Blocks, be)
			out, _ := output(b)
			tokens -= (len(out) - len(dropped)) / charsPerToken
		}
	}
	if len(e.Blocks) == 0 {
		return Edit{}, false
	}
	if err := h.Apply(e); err != nil {
		panic("history: own drop edit rejected: " + err.Error())
	}
	return e, true
}

// KeepFrom returns the index of the first message a compaction keeps: the
// most recent messages worth about tokens, never starting at a message of
// tool results (which would separate them from their calls), never keeping
// the old summary, and always keeping at least the last message (with its
// calls when it holds tool results).
func (h *History) KeepFrom(tokens int) int {
	n := len(h.msgs)
	if n == 0 {
		return 0
	}
	k, sum := n, 0
	for k > h.floor+1 && sum+h.est[k-1] <= tokens {
		k--
		sum += h.est[k]
	}
	for k < n && answers(h.msgs[k]) {
		k++
	}
	if k >= n {
		k = n - 1
		for k > h.floor+1 && answers(h.msgs[k]) {
			k--
		}
	}
	return max(k, h.floor+1)
}

// answers reports whether m answers the calls of the message before it:
// tool results, or a closed round's restated results (a compaction keeps
// them with their call, and never merges its summary into them).
func answers(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Layer == LayerClose {
			return true
		}
	}
	return hasToolResult(m)
}

func hasToolResult(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

// RewindTo returns the edit that takes back the last n user prompts (or
// as many as there are) and everything after them, the first prompt taken
// back and how many were. Turns before the summary cannot be taken back:
// they are gone already.
func (h *History) RewindTo(n int) (e Edit, prompt string, taken int, err error) {
	keep := -1
	for i := len(h.msgs) - 1; i > h.floor && taken < n; i-- {
		m := h.msgs[i]
		if m.Role == llm.RoleUser && !hasToolResult(m) && PromptText(m) != "" {
			keep, prompt = i, PromptText(m)
			taken++
		}
	}
	if keep < 0 {
		return Edit{}, "", 0, fmt.Errorf("nothing to take back since the start or the last compaction")
	}
	return Edit{Layer: LayerRewind, Keep: keep}, prompt, taken, nil
}

// PromptText returns what the user wrote in m: its text blocks that no
// layer wrote (not a persisted reminder, a summary, the harness's feedback
// or a closed round's restated call and result).
func PromptText(m llm.Message) string {
	var s string
	for _, b := range m.Blocks {
		if b.Type == llm.BlockText && b.Layer == "" {
			s += b.Text
		}
	}
	return s
}
