package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// Instruction is the request for the handoff note, sent as the final user
// message.
const Instruction = `The conversation so far is about to be replaced by a handoff note to save context; the most recent messages will stay after it verbatim. Write that note now, for a colleague who continues the work with no other memory of it. Use exactly these sections:

## Goal
What the user wants. Quote the user where the wording matters.
## What happened
Decisions taken and why; approaches tried and abandoned, and why.
## Files
Every file read, created, edited or deleted, and how.
## State
What works, what fails (with the exact error), what is half done.
## Next
The next steps, in order.

Be specific: paths, names, commands, numbers. Do not call tools. Put the whole note inside <summary></summary>.`

// noteReserve is the room, in tokens, kept for the note in the window.
const noteReserve = 4096

// pendingResult is the content of a tool result for a call not run yet
// when the compaction happens (the API needs every call answered).
const pendingResult = "(not run yet: the context is being compacted first; the call will be made again if still needed)"

// Request returns the summarisation request built from base: base's system
// prompt, tools, messages and session id, plus one user message with the
// instruction (and the focus, if any). The reminder is left out: it sits
// after the cached prefix and is rebuilt for the next real request anyway.
func Request(base llm.Request, focus string) llm.Request {
	req := base
	req.Reminder = ""
	var blocks []llm.Block
	if n := len(base.Messages); n > 0 && base.Messages[n-1].Role == llm.RoleAssistant {
		for _, c := range base.Messages[n-1].ToolCalls() {
			blocks = append(blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: pendingResult})
		}
	}
	text := Instruction
	if focus = strings.TrimSpace(focus); focus != "" {
		text += "\n\nThe user asks the note to focus on: " + focus
	}
	blocks = append(blocks, llm.Block{Type: llm.BlockText, Text: text})
	req.Messages = append(append([]llm.Message(nil), base.Messages...), llm.Message{Role: llm.RoleUser, Blocks: blocks})
	return req
}

// Compact asks the model for a handoff summary. base is the exact request
// the agent would send next, built from h.Messages(), so the provider reads
// the cached prefix. It returns the edit for the agent to Apply to h and
// log (h must not change in between), and the reply for usage and cost.
//
// When the history is too long even for this call (llm.ErrContextTooLong),
// the agent calls h.ForceDrop, logs its edits, rebuilds base and calls
// Compact again.
func Compact(ctx context.Context, p llm.Provider, base llm.Request, h *history.History, focus string) (history.Edit, *llm.Reply, error) {
	cfg := h.Config()
	// Keep recent messages worth COMPACT_TO of the window, but never more
	// than half of the messages there are: a /compact the user asks for
	// early must still shrink the conversation.
	keep := h.KeepFrom(min(int(cfg.CompactTo*float64(cfg.Window)), h.MessageTokens()/2))
	if h.Tokens()+history.EstimateText(Instruction)+min(noteReserve, cfg.Window/10) > cfg.Window && keep > 0 && keep <= len(base.Messages) {
		// The whole history would not fit with the note (a huge last
		// reply): summarise only what is replaced. It is still a prefix
		// of what was sent, so the cache still serves it.
		base.Messages = base.Messages[:keep]
	}
	req := Request(base, focus)
	reply, err := p.Stream(ctx, &req, nil)
	if err != nil {
		return history.Edit{}, nil, fmt.Errorf("compacting the conversation: %w", err)
	}
	note := Extract(reply.Message.PlainText())
	if note == "" {
		return history.Edit{}, reply, errors.New("compacting the conversation: the model returned an empty summary; try /compact again")
	}
	return history.Edit{
		Layer: history.LayerSummary,
		Keep:  keep,
		Summary: &llm.Block{
			Type:  llm.BlockText,
			Text:  Wrap(note),
			Layer: history.LayerSummary,
		},
	}, reply, nil
}

// Extract returns the note inside the last <summary></summary> of text, or
// the whole trimmed text when the model left the tags out.
func Extract(text string) string {
	if i := strings.LastIndex(text, "<summary>"); i >= 0 {
		rest := text[i+len("<summary>"):]
		if j := strings.Index(rest, "</summary>"); j >= 0 {
			rest = rest[:j]
		}
		return strings.TrimSpace(rest)
	}
	return strings.TrimSpace(text)
}

// Wrap is the stored form of a summary.
func Wrap(note string) string {
	return "This session was compacted to save context. The handoff note written before compaction:\n<summary>\n" +
		note + "\n</summary>\nThe messages after this are the most recent ones, verbatim. Continue from State and Next."
}
