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

// Compact asks the model for a handoff summary of what a compaction made
// now replaces and returns the edit for the agent to Apply to h and log (h
// must not change in between), and the reply for usage and cost. Where the
// history is cut and how the kept messages change is h's decision
// (CompactKeep, SummaryEdit); this package only writes the summary.
func Compact(ctx context.Context, p llm.Provider, base llm.Request, h *history.History, focus string) (history.Edit, *llm.Reply, error) {
	keep := h.CompactKeep()
	block, reply, err := Write(ctx, p, base, h, keep, focus)
	if err != nil {
		return history.Edit{}, reply, err
	}
	return h.SummaryEdit(keep, block), reply, nil
}

// Write asks the model for the handoff summary of the messages before keep
// and returns the summary block (history.LayerSummary) and the reply for
// usage and cost (a chunked summary's usage is the sum of its calls). base
// is the exact request the agent would send next, built from h.Messages(),
// so the provider reads the cached prefix.
//
// The summarisation request is made to fit h's working window: the whole
// history when it fits with the instruction and the note, else only the
// part being replaced (still a prefix of what was sent, so still cached),
// else — or when the provider refuses even that as too long — the part
// being replaced is summarised in chunks, each a request of its own well
// inside the window. The user's own messages in the part replaced are
// quoted verbatim in the summary block by harness, not left to the model.
func Write(ctx context.Context, p llm.Provider, base llm.Request, h *history.History, keep int, focus string) (llm.Block, *llm.Reply, error) {
	cfg := h.Config()
	room := cfg.Window - history.EstimateText(Instruction) - min(noteReserve, cfg.Window/10)
	msgs := base.Messages
	var reply *llm.Reply
	var err error
	if h.Tokens() > room && keep > 0 && keep <= len(base.Messages) {
		// The whole history would not fit with the note: summarise only
		// what is replaced.
		base.Messages = base.Messages[:keep]
	}
	replaced := msgs[min(h.Floor()+1, keep):keep]
	if h.Tokens()-h.TokensFrom(len(base.Messages)) <= room || len(replaced) == 0 {
		req := Request(base, focus)
		reply, err = p.Stream(ctx, &req, nil)
	} else {
		err = &llm.Error{Kind: llm.ErrContextTooLong, Message: "the part to summarise is over the working window"}
	}
	if llm.KindOf(err) == llm.ErrContextTooLong && len(replaced) > 0 {
		var used llm.Usage
		var note string
		note, used, err = chunked(ctx, p, base, replaced, cfg.Window, focus)
		if err == nil {
			reply = &llm.Reply{Message: llm.Text(llm.RoleAssistant, "<summary>"+note+"</summary>"), Usage: used, StopReason: llm.StopEnd}
		}
	}
	if err != nil {
		return llm.Block{}, reply, fmt.Errorf("compacting the conversation: %w", err)
	}
	note := Extract(reply.Message.PlainText())
	if note == "" {
		return llm.Block{}, reply, errors.New("compacting the conversation: the model returned an empty summary; try /compact again")
	}
	text := Wrap(note)
	if q := quoteUser(msgs, h.Floor(), keep, cfg.Window); q != "" {
		text += "\n" + q
	}
	return llm.Block{Type: llm.BlockText, Text: text, Layer: history.LayerSummary}, reply, nil
}

// chunkInstruction heads each request of a chunked summary.
const chunkInstruction = "You are summarising a long coding session in parts, because it does not fit in one request. " +
	"Below are the handoff note so far (empty for the first part) and the next part of the transcript. " +
	"Write the updated handoff note covering everything up to the end of this part.\n\n"

// chunked summarises msgs in parts, each request at most a third of the
// window by estimate (a tokenizer denser than the estimate still fits),
// halving the part when the provider still says it is too long.
func chunked(ctx context.Context, p llm.Provider, base llm.Request, msgs []llm.Message, window int, focus string) (string, llm.Usage, error) {
	var used llm.Usage
	budget := max(window/3-history.EstimateText(Instruction+chunkInstruction)-noteReserve/2, 256)
	note := ""
	for i := 0; i < len(msgs); {
		text, n := transcript(msgs[i:], budget*4)
		req := llm.Request{Model: base.Model, MaxTokens: base.MaxTokens, SessionID: base.SessionID,
			Messages: []llm.Message{llm.Text(llm.RoleUser, chunkInstruction+"<note>\n"+note+"\n</note>\n<transcript>\n"+text+"</transcript>\n\n"+Instruction+focusLine(focus))}}
		reply, err := p.Stream(ctx, &req, nil)
		if llm.KindOf(err) == llm.ErrContextTooLong && budget > 256 {
			budget /= 2
			continue
		}
		if err != nil {
			return "", used, err
		}
		used = used.Add(reply.Usage)
		if got := Extract(reply.Message.PlainText()); got != "" {
			note = got
		}
		i += n
	}
	return note, used, nil
}

func focusLine(focus string) string {
	if focus = strings.TrimSpace(focus); focus != "" {
		return "\n\nThe user asks the note to focus on: " + focus
	}
	return ""
}

// transcript renders the first messages of msgs as plain text, at most
// limit chars, and says how many it took (at least one: a message too long
// alone is cut in the middle).
func transcript(msgs []llm.Message, limit int) (string, int) {
	var sb strings.Builder
	n := 0
	for _, m := range msgs {
		var mb strings.Builder
		for _, b := range m.Blocks {
			switch b.Type {
			case llm.BlockText:
				fmt.Fprintf(&mb, "[%s] %s\n", m.Role, b.Text)
			case llm.BlockToolUse:
				fmt.Fprintf(&mb, "[tool call %s] %s\n", b.Name, b.Input)
			case llm.BlockToolResult:
				fmt.Fprintf(&mb, "[tool result] %s\n", b.Content)
			}
		}
		t := mb.String()
		if sb.Len()+len(t) > limit {
			if n > 0 {
				break
			}
			half := limit / 2
			t = t[:half] + "\n[… cut to fit …]\n" + t[len(t)-half:]
		}
		sb.WriteString(t)
		n++
	}
	return sb.String(), max(n, 1)
}

// quoteOpen and quoteClose delimit the user's messages in a summary block.
const (
	quoteOpen  = "<user_messages>\nThe user's messages in the part of the session this note replaces, verbatim, oldest first:\n"
	quoteClose = "</user_messages>"
	quoteSep   = "\n---\n"
)

// quoteUser returns the user's prompts in msgs[floor:keep] — those quoted
// in the previous summary first — verbatim, at most a tenth of the window
// by estimate: the first and the latest are kept, the middle elided.
func quoteUser(msgs []llm.Message, floor, keep, window int) string {
	var quotes []string
	if floor >= 0 && floor < len(msgs) {
		for _, b := range msgs[floor].Blocks {
			if b.Layer != history.LayerSummary {
				continue
			}
			if i := strings.Index(b.Text, quoteOpen); i >= 0 {
				rest := b.Text[i+len(quoteOpen):]
				if j := strings.LastIndex(rest, quoteClose); j >= 0 {
					quotes = append(quotes, strings.Split(strings.TrimSuffix(rest[:j], "\n"), quoteSep)...)
				}
			}
		}
		// A prompt sharing the summary's message is the user's too.
		if t := history.PromptText(msgs[floor]); t != "" {
			quotes = append(quotes, t)
		}
	}
	for i := floor + 1; i < keep && i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != llm.RoleUser {
			continue
		}
		if t := history.PromptText(m); t != "" && !hasResult(m) {
			quotes = append(quotes, t)
		}
	}
	if len(quotes) == 0 {
		return ""
	}
	limit := window / 10 * 4
	for total(quotes) > limit && len(quotes) > 2 {
		quotes = append(quotes[:1], quotes[2:]...)
	}
	return quoteOpen + strings.Join(quotes, quoteSep) + "\n" + quoteClose
}

func total(qs []string) int {
	n := 0
	for _, q := range qs {
		n += len(q) + len(quoteSep)
	}
	return n
}

func hasResult(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
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
