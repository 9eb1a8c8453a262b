package history

import (
	"fmt"

	"github.com/harness-dev/harness/internal/llm"
)

// LostResultNote is the result a repair gives a tool call whose result a
// damaged session log lost.
const LostResultNote = "result lost: the session log line that held it was damaged, so harness cannot say what this call returned. " +
	"Check its effects before running it again."

// droppedResultsNote replaces a user message that held only results of
// calls a damaged log lost.
const droppedResultsNote = "[harness: tool results whose calls were lost from a damaged session log were removed here]"

// Repair makes the history valid for a provider again after a damaged
// log lost lines anywhere in it: every tool call gets its result in the
// next message (a lost one says so), and a result whose call is gone is
// removed. It returns the edit it applied, for the session log (so a
// later resume rebuilds the same bytes), and false when nothing needed
// it. A tool round still open at the very end is left for the caller,
// which closes it as interrupted.
//
// The edit replaces the messages from the first one it changes on, and
// removes the reasoning after it: their prefix changed.
func (h *History) Repair() (Edit, bool) {
	keep, tail := repairPairs(h.msgs, h.floor)
	if tail == nil {
		return Edit{}, false
	}
	e := Edit{Layer: LayerRepair, Keep: keep, Messages: tail, Unthink: true}
	if err := h.Apply(e); err != nil {
		return Edit{}, false // repairPairs keeps keep in range: not reached
	}
	return e, true
}

// repairPairs returns the index of the first message that must change and
// the repaired messages from there on, or nil.
func repairPairs(msgs []llm.Message, floor int) (int, []llm.Message) {
	var out []llm.Message
	first := -1
	changed := func(i int) {
		if first < 0 {
			first = i
		}
	}
	start := floor + 1       // the summary, and what it replaced, stay
	var open map[string]bool // the previous assistant message's calls
	for i := start; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == llm.RoleAssistant {
			if len(open) > 0 {
				// Two assistant messages in a row: the results of the
				// first were lost whole.
				changed(i)
				out = append(out, lostResults(msgs[i-1], nil))
			}
			out = append(out, m)
			open = map[string]bool{}
			for _, c := range m.ToolCalls() {
				open[c.ID] = true
			}
			continue
		}
		// A user message: it answers the calls still open, no others.
		var blocks []llm.Block
		answered := map[string]bool{}
		for _, b := range m.Blocks {
			if b.Type == llm.BlockToolResult {
				if !open[b.ToolUseID] || answered[b.ToolUseID] {
					changed(i)
					continue
				}
				answered[b.ToolUseID] = true
			}
			blocks = append(blocks, b)
		}
		if i > start && msgs[i-1].Role == llm.RoleAssistant && len(answered) < len(open) {
			changed(i)
			missing := lostResults(msgs[i-1], answered)
			blocks = append(missing.Blocks, blocks...)
		}
		if len(blocks) == 0 {
			blocks = []llm.Block{{Type: llm.BlockText, Text: droppedResultsNote}}
		}
		m.Blocks = blocks
		out = append(out, m)
		open = nil
	}
	if first < 0 {
		return 0, nil
	}
	// out holds every message from start on; those before first were
	// copied unchanged, one each.
	return first, out[first-start:]
}

// lostResults is a user message holding a lost-result note for each call
// of a that is not in answered.
func lostResults(a llm.Message, answered map[string]bool) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, c := range a.ToolCalls() {
		if !answered[c.ID] {
			m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: LostResultNote, IsError: true})
		}
	}
	return m
}

// applyRepair replaces the messages from e.Keep on with e.Messages.
func (h *History) applyRepair(e Edit) error {
	if e.Keep <= h.floor || e.Keep > len(h.msgs) {
		return fmt.Errorf("history edit: repair from message %d of %d (summary at %d)", e.Keep, len(h.msgs), h.floor)
	}
	for _, est := range h.est[e.Keep:] {
		h.total -= est
	}
	h.msgs, h.est = h.msgs[:e.Keep:e.Keep], h.est[:e.Keep:e.Keep]
	for _, m := range e.Messages {
		m.Blocks = append([]llm.Block(nil), m.Blocks...)
		est := Estimate(m)
		h.msgs = append(h.msgs, m)
		h.est = append(h.est, est)
		h.total += est
	}
	h.touched(e.Keep)
	if e.Unthink {
		h.unthinkFrom(e.Keep)
	}
	return nil
}
