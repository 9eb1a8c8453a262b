package history

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// LayerClose marks the text block that restates a closed tool round's
// result (Edit.Close). The strip and the drop treat it as the tool output
// it carries. LayerCloseCall marks the block before it, which restates the
// call: like a call's input it is never stubbed as output, so a body the
// call wrote stays whole.
const (
	LayerClose     = "close"
	LayerCloseCall = "close-call"
)

// ClosedRound heads the restated call of a closed round: what the model
// reads instead of its call and the call's result.
const ClosedRound = "[harness: history shortened; your last call, restated]"

// closedCallText stands in an assistant message whose tool calls a close
// moved to the next message and which has no text of its own: the API
// rejects an empty assistant message and one that ends with thinking.
const closedCallText = "[harness: call restated below]"

// closeRound closes the pending tool round: when the history ends with an
// assistant message holding tool calls and the user message holding their
// results, the calls leave the assistant message (its text stays) and each
// call and its result are restated as text in the user message, marked
// LayerClose. The request then ends on a plain user message, so no final
// assistant message must start with a thinking block bound to the old
// prefix (rule A1 in shared/notes/thinking-rules.md), and the model still
// sees what its last call returned. It does nothing when no round is open.
func (h *History) closeRound() {
	n := len(h.msgs)
	if n < 2 || n-2 <= h.floor {
		return
	}
	a, u := h.msgs[n-2], h.msgs[n-1]
	calls := a.ToolCalls()
	if a.Role != llm.RoleAssistant || u.Role != llm.RoleUser || len(calls) == 0 || !hasToolResult(u) {
		return
	}
	byID := make(map[string]llm.Block, len(calls))
	for _, c := range calls {
		byID[c.ID] = c
	}
	na := llm.Message{Role: a.Role}
	for _, b := range a.Blocks {
		if b.Type != llm.BlockToolUse {
			na.Blocks = append(na.Blocks, b)
		}
	}
	if k := len(na.Blocks); k == 0 || na.Blocks[k-1].Type != llm.BlockText {
		na.Blocks = append(na.Blocks, llm.Block{Type: llm.BlockText, Text: closedCallText})
	}
	nu := llm.Message{Role: u.Role}
	for _, b := range u.Blocks {
		if b.Type != llm.BlockToolResult {
			nu.Blocks = append(nu.Blocks, b)
			continue
		}
		c := byID[b.ToolUseID]
		call := fmt.Sprintf("%s %s %s", ClosedRound, c.Name, strings.TrimSpace(string(c.Input)))
		var sb strings.Builder
		if b.IsError {
			sb.WriteString(closedFailed)
		} else {
			sb.WriteString(closedReturned)
		}
		if strings.TrimSpace(b.Content) == "" {
			sb.WriteString("(no output)")
		} else {
			sb.WriteString(b.Content)
		}
		nu.Blocks = append(nu.Blocks,
			llm.Block{Type: llm.BlockText, Text: call, Layer: LayerCloseCall},
			llm.Block{Type: llm.BlockText, Text: sb.String(), Layer: LayerClose})
	}
	for i, m := range []llm.Message{na, nu} {
		k := n - 2 + i
		h.msgs[k] = m
		e := Estimate(m)
		h.total += e - h.est[k]
		h.est[k] = e
	}
	h.touched(n - 2)
	h.stats.Closes++
}

// The heads of a closed round's restated result.
const (
	closedReturned = "It returned:\n"
	closedFailed   = "It failed:\n"
)

// output returns the tool output a block carries: a tool result's content,
// or the restated result of a closed round.
func output(b llm.Block) (string, bool) {
	switch {
	case b.Type == llm.BlockToolResult:
		return b.Content, true
	case b.Type == llm.BlockText && b.Layer == LayerClose:
		return b.Text, true
	}
	return "", false
}

// outputEdit is the BlockEdit that sets the output of block j of message
// i, a tool result or a closed round's text, to s.
func outputEdit(i, j int, b llm.Block, s string) BlockEdit {
	if b.Type == llm.BlockText {
		return BlockEdit{Message: i, Block: j, Text: s}
	}
	return BlockEdit{Message: i, Block: j, Content: s}
}
