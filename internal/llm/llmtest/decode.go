package llmtest

import (
	"encoding/json"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// textOrParts decodes a content field given as a string or as an array of
// {"type":"text","text":…} parts.
func textOrParts(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func decodeRequest(f Format, body []byte) Request {
	if f == FormatAnthropic {
		return decodeAnthropic(body)
	}
	return decodeOpenAI(body)
}

func decodeAnthropic(body []byte) Request {
	req := Request{Body: body, Format: FormatAnthropic}
	var w struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		System    json.RawMessage `json:"system"`
		Tools     []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		req.DecodeErr = err
		return req
	}
	req.Model, req.MaxTokens, req.Stream = w.Model, w.MaxTokens, w.Stream
	if len(w.System) > 0 {
		req.System = textOrParts(w.System)
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	type block struct {
		llm.Block
		Content      json.RawMessage `json:"content"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	var msgs [][]block
	for _, m := range w.Messages {
		var bs []block
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			bs = []block{{Block: llm.Block{Type: llm.BlockText, Text: s}}}
		} else if err := json.Unmarshal(m.Content, &bs); err != nil {
			req.DecodeErr = err
		}
		for j := range bs {
			if len(bs[j].Content) > 0 {
				bs[j].Block.Content = textOrParts(bs[j].Content)
			}
		}
		msgs = append(msgs, bs)
	}
	// The adapter appends the reminder as one text block, without
	// cache_control, at the end of the last user message (a message of its
	// own after an assistant one). Every stored last block either carries
	// the rolling breakpoint or is a tool result of a volatile tail, so an
	// unmarked trailing text block is the reminder.
	if n := len(msgs); n > 0 && w.Messages[n-1].Role == string(llm.RoleUser) {
		last := msgs[n-1]
		if k := len(last) - 1; k >= 0 && last[k].Type == llm.BlockText && !marked(last[k].CacheControl) {
			req.Reminder = last[k].Text
			msgs[n-1] = last[:k]
			if len(msgs[n-1]) == 0 {
				msgs = msgs[:n-1]
			}
		}
	}
	for i, bs := range msgs {
		m := llm.Message{Role: llm.Role(w.Messages[i].Role)}
		for _, b := range bs {
			m.Blocks = append(m.Blocks, b.Block)
		}
		req.Messages = append(req.Messages, m)
	}
	return req
}

func decodeOpenAI(body []byte) Request {
	req := Request{Body: body, Format: FormatOpenAI}
	var w struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Stream              bool   `json:"stream"`
		Tools               []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		req.DecodeErr = err
		return req
	}
	req.Model, req.Stream = w.Model, w.Stream
	req.MaxTokens = max(w.MaxTokens, w.MaxCompletionTokens)
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	msgs := w.Messages
	// The reminder is a user message right after a tool message, or, since
	// the adapter merges adjacent user messages, the part of the last user
	// message from harness's "<context>" on.
	if n := len(msgs); n >= 2 && msgs[n-1].Role == "user" {
		text := textOrParts(msgs[n-1].Content)
		switch i := strings.LastIndex(text, "\n\n<context>"); {
		case msgs[n-2].Role == "tool" || msgs[n-2].Role == "user":
			req.Reminder = text
			msgs = msgs[:n-1]
		case i >= 0:
			req.Reminder = text[i+2:]
			last := msgs[n-1]
			last.Content = json.RawMessage(jsonString(text[:i]))
			msgs = append(msgs[:n-1:n-1], last)
		}
	}
	var out []llm.Message
	// userOpen reports whether the last neutral message is a user message
	// still collecting tool results and text.
	userOpen := false
	for _, m := range msgs {
		switch m.Role {
		case "system", "developer":
			req.System = textOrParts(m.Content)
			userOpen = false
		case "assistant":
			am := llm.Message{Role: llm.RoleAssistant}
			if t := textOrParts(m.Content); t != "" {
				am.Blocks = append(am.Blocks, llm.Block{Type: llm.BlockText, Text: t})
			}
			for _, c := range m.ToolCalls {
				in := json.RawMessage(c.Function.Arguments)
				if !json.Valid(in) {
					in = json.RawMessage(jsonString(c.Function.Arguments))
				}
				am.Blocks = append(am.Blocks, llm.Block{Type: llm.BlockToolUse, ID: c.ID, Name: c.Function.Name, Input: in})
			}
			out = append(out, am)
			userOpen = false
		case "tool":
			b := llm.Block{Type: llm.BlockToolResult, ToolUseID: m.ToolCallID, Content: textOrParts(m.Content)}
			if !userOpen {
				out = append(out, llm.Message{Role: llm.RoleUser})
				userOpen = true
			}
			out[len(out)-1].Blocks = append(out[len(out)-1].Blocks, b)
		case "user":
			b := llm.Block{Type: llm.BlockText, Text: textOrParts(m.Content)}
			if !userOpen {
				out = append(out, llm.Message{Role: llm.RoleUser})
			}
			out[len(out)-1].Blocks = append(out[len(out)-1].Blocks, b)
			userOpen = false
		}
	}
	req.Messages = out
	return req
}

func marked(cc json.RawMessage) bool { return len(cc) > 0 && string(cc) != "null" }
