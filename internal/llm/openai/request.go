package openai

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
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
// accepts.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
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

// buildRequest translates req into the wire body; officialAPI selects
// max_completion_tokens (api.openai.com) over max_tokens (everyone else).
func buildRequest(req *llm.Request, officialAPI bool) wireRequest {
	w := wireRequest{
		Model:          req.Model,
		Stream:         true,
		StreamOptions:  &streamOptions{IncludeUsage: true},
		PromptCacheKey: req.SessionID,
		Messages:       []wireMessage{},
	}
	if officialAPI {
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
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: str(req.System)})
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, wireMessages(m)...)
	}
	if req.Reminder != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "user", Content: str(req.Reminder)})
	}
	w.Messages = mergeUsers(w.Messages)
	return w
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
		if n := len(out); n > 0 && m.Role == "user" && out[n-1].Role == "user" && out[n-1].Content != nil && m.Content != nil {
			out[n-1].Content = str(*out[n-1].Content + "\n\n" + *m.Content)
			continue
		}
		out = append(out, m)
	}
	return out
}

// wireMessages maps one stored message to chat messages. A user message's
// tool results come first, one "tool" message each, right after the
// assistant message that called them, as the API requires; its text follows
// as a user message. Thinking blocks are not sent back: the Chat Completions
// API has no field for them.
func wireMessages(m llm.Message) []wireMessage {
	var text []string
	if m.Role == llm.RoleAssistant {
		wm := wireMessage{Role: "assistant"}
		for _, b := range m.Blocks {
			switch {
			case b.Blank():
			case b.Type == llm.BlockText:
				text = append(text, b.Text)
			case b.Type == llm.BlockToolUse:
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: b.ID, Type: "function",
					Function: wireCallFunction{Name: b.Name, Arguments: arguments(b.Input)}})
			}
		}
		if len(text) > 0 || len(wm.ToolCalls) == 0 {
			wm.Content = str(strings.Join(text, "\n\n"))
		}
		return []wireMessage{wm}
	}
	var out []wireMessage
	for _, b := range m.Blocks {
		switch b.Type {
		case llm.BlockToolResult:
			out = append(out, wireMessage{Role: "tool", Content: str(b.Content), ToolCallID: b.ToolUseID})
		case llm.BlockText:
			text = append(text, b.Text)
		}
	}
	if len(text) > 0 || len(out) == 0 {
		out = append(out, wireMessage{Role: "user", Content: str(strings.Join(text, "\n\n"))})
	}
	return out
}
