package openai

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/cacheplan"
)

// The wire structs fix the field order of the body; messages comes last so
// a longer conversation's body extends a shorter one's.
type wireRequest struct {
	Model               string         `json:"model"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Tools               []wireTool     `json:"tools,omitempty"`
	Messages            []wireMessage  `json:"messages"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireMessage is a chat message. Content is a pointer so an assistant
// message that only calls tools sends "content": null, which every server
// accepts; Parts replaces it with content parts when one carries a cache
// marker.
type wireMessage struct {
	Role             string          `json:"role"`
	Content          any             `json:"content"` // *string or []contentPart
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`

	// src is the index of the stored message this came from (-1 for the
	// system prompt and the reminder), blocks which of its blocks.
	src    int
	blocks []int
}

// contentPart is a text part; cache_control makes it a breakpoint.
type contentPart struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type wireToolCall struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Function     wireCallFunction `json:"function"`
	ExtraContent *extraContent    `json:"extra_content,omitempty"`
}

// extraContent carries Gemini's thought signature on a tool call.
type extraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func str(s string) *string { return &s }

// arguments returns a stored tool input as the arguments string. Inputs the
// model produced as invalid JSON were stored as a JSON string holding the
// raw text (see toolJSON); they go back as that raw text.
func arguments(in json.RawMessage) string {
	in = bytes.TrimSpace(in)
	if len(in) == 0 {
		return "{}"
	}
	if in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s
		}
	}
	return string(in)
}

// text returns a message's content as text ("" when it has none).
func (m *wireMessage) text() (string, bool) {
	c, ok := m.Content.(*string)
	if !ok || c == nil {
		return "", false
	}
	return *c, true
}

// buildRequest translates req into the wire body for a server of profile p.
// It is a pure function of its arguments: the same input, the same bytes.
func buildRequest(req *llm.Request, p Profile) wireRequest {
	w := wireRequest{
		Model:    req.Model,
		Stream:   true,
		Messages: []wireMessage{},
	}
	if p.StreamOptions {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if p.CacheKey {
		w.PromptCacheKey = req.SessionID
	}
	if p.ReasoningEffort {
		w.ReasoningEffort = reasoningEffort(req.Thinking, p)
	}
	if p.MaxCompletionTokens {
		w.MaxCompletionTokens = req.MaxTokens
	} else {
		w.MaxTokens = req.MaxTokens
	}
	for _, t := range req.Tools {
		params := t.Schema
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: str(req.System), src: -1})
	}
	for i, m := range req.Messages {
		w.Messages = append(w.Messages, wireMessages(i, m, p)...)
	}
	if req.Reminder != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "user", Content: str(req.Reminder), src: -1})
	}
	w.Messages = mergeUsers(w.Messages)
	if p.CacheControl {
		markCache(&w, req)
	}
	return w
}

// reasoningEffort is EFFORT as reasoning_effort ("" sends none). OpenAI's
// top level is xhigh, so max asks for that; OpenRouter takes max itself.
// THINKING=off sends nothing here: "none" exists only from gpt-5.1 on, and
// a model that cannot stop reasoning would refuse the request.
func reasoningEffort(t llm.Thinking, p Profile) string {
	if t.Mode == llm.ThinkingOff || t.Effort == "" {
		return ""
	}
	if t.Effort == "max" && p.Name != "openrouter" {
		return "xhigh"
	}
	return t.Effort
}

// mergeUsers joins adjacent user messages into one. Many chat templates
// (Gemma's, Mistral's, and others served by vLLM or llama.cpp) reject
// roles that do not alternate, and two user messages in a row happen: the
// reminder after a prompt, or a prompt after an interrupted turn. Only the
// tail of the conversation is ever merged differently from one request to
// the next, so the cached prefix is unaffected.
func mergeUsers(msgs []wireMessage) []wireMessage {
	out := msgs[:0]
	for _, m := range msgs {
		if n := len(out); n > 0 && m.Role == "user" && out[n-1].Role == "user" {
			a, aok := out[n-1].text()
			b, bok := m.text()
			if aok && bok {
				out[n-1].Content = str(a + "\n\n" + b)
				if out[n-1].src < 0 {
					out[n-1].src, out[n-1].blocks = m.src, m.blocks
				}
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// markCache puts cache_control where the Anthropic adapter puts its
// breakpoints, for Claude behind OpenRouter: on the system prompt and on
// the stored blocks the plan (cacheplan) chooses. A marked message's
// content becomes one text part carrying the marker; a marker on a tool
// call has no place in this format and is left out.
func markCache(w *wireRequest, req *llm.Request) {
	plan := cacheplan.Of(req)
	system, blocks := plan.System, plan.Blocks
	mark := func(m *wireMessage) {
		if t, ok := m.text(); ok && strings.TrimSpace(t) != "" {
			m.Content = []contentPart{{Type: "text", Text: t, CacheControl: &cacheControl{Type: "ephemeral"}}}
		}
	}
	if system && len(w.Messages) > 0 && w.Messages[0].Role == "system" {
		mark(&w.Messages[0])
	}
	for _, b := range blocks {
		for i := range w.Messages {
			m := &w.Messages[i]
			if m.src == b.Message && slices.Contains(m.blocks, b.Block) {
				if m.Role != "assistant" || req.Messages[b.Message].Blocks[b.Block].Type == llm.BlockText {
					mark(m)
				}
				break
			}
		}
	}
}

// wireMessages maps stored message i to chat messages. A user message's
// tool results come first, one "tool" message each, right after the
// assistant message that called them, as the API requires; its text follows
// as a user message. Reasoning goes back only where the profile says the
// server needs it.
func wireMessages(i int, m llm.Message, p Profile) []wireMessage {
	var text []string
	if m.Role == llm.RoleAssistant {
		wm := wireMessage{Role: "assistant", src: i}
		var thinking []string
		var details []json.RawMessage
		for j, b := range m.Blocks {
			switch {
			case b.Blank():
			case b.Type == llm.BlockText:
				text = append(text, b.Text)
				wm.blocks = append(wm.blocks, j)
			case b.Type == llm.BlockThinking:
				thinking = append(thinking, b.Thinking)
				if len(b.ReasoningDetails) > 0 {
					details = append(details, b.ReasoningDetails)
				}
			case b.Type == llm.BlockToolUse:
				tc := wireToolCall{ID: b.ID, Type: "function",
					Function: wireCallFunction{Name: b.Name, Arguments: arguments(b.Input)}}
				if p.ThoughtSignatures && b.ThoughtSignature != "" {
					tc.ExtraContent = &extraContent{}
					tc.ExtraContent.Google.ThoughtSignature = b.ThoughtSignature
				}
				wm.ToolCalls = append(wm.ToolCalls, tc)
				wm.blocks = append(wm.blocks, j)
			}
		}
		if len(text) > 0 || len(wm.ToolCalls) == 0 {
			wm.Content = str(strings.Join(text, "\n\n"))
		} else {
			wm.Content = (*string)(nil)
		}
		if p.ReasoningContent {
			// DeepSeek's thinking mode needs it on every assistant message
			// of a turn that called tools, its final answer included (rule
			// C1 of notes/thinking-rules.md: DeepSeek's thinking_mode docs,
			// MoonshotAI/kimi-cli#2141), empty when the model did not think;
			// sent on every one, so no message changes once the turn is over.
			wm.ReasoningContent = str(strings.Join(thinking, ""))
		}
		if p.ReasoningDetails && len(details) > 0 {
			wm.ReasoningDetails = joinDetails(details)
		}
		return []wireMessage{wm}
	}
	var out []wireMessage
	var textBlocks []int
	// A tool message holds text only, so the images of tool results and
	// the user's own go in the user message after the tool messages.
	var images []any
	for j, b := range m.Blocks {
		switch {
		case b.Type == llm.BlockToolResult:
			out = append(out, wireMessage{Role: "tool", Content: str(b.Content), ToolCallID: b.ToolUseID, src: i, blocks: []int{j}})
			if b.Image != nil {
				images = append(images, contentPart{Type: "text", Text: "The " + b.Image.Describe() + " returned by tool call " + b.ToolUseID + ":"}, imagePartOf(b.Image))
				textBlocks = append(textBlocks, j)
			}
		case b.Type == llm.BlockImage && b.Image != nil:
			images = append(images, imagePartOf(b.Image))
			textBlocks = append(textBlocks, j)
		case b.Blank():
		case b.Type == llm.BlockText:
			text = append(text, b.Text)
			textBlocks = append(textBlocks, j)
		}
	}
	if len(images) > 0 {
		var parts []any
		if len(text) > 0 {
			parts = append(parts, contentPart{Type: "text", Text: strings.Join(text, "\n\n")})
		}
		return append(out, wireMessage{Role: "user", Content: append(parts, images...), src: i, blocks: textBlocks})
	}
	if len(text) > 0 || len(out) == 0 {
		out = append(out, wireMessage{Role: "user", Content: str(strings.Join(text, "\n\n")), src: i, blocks: textBlocks})
	}
	return out
}

// imagePart is an image content part: a data: URL.
type imagePart struct {
	Type     string `json:"type"` // image_url
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func imagePartOf(img *llm.Image) imagePart {
	p := imagePart{Type: "image_url"}
	p.ImageURL.URL = img.DataURL()
	return p
}

// joinDetails concatenates reasoning_details arrays into one.
func joinDetails(parts []json.RawMessage) json.RawMessage {
	if len(parts) == 1 {
		return parts[0]
	}
	var all []json.RawMessage
	for _, p := range parts {
		var a []json.RawMessage
		if json.Unmarshal(p, &a) == nil {
			all = append(all, a...)
		}
	}
	b, _ := json.Marshal(all)
	return b
}
