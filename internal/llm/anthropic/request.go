package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/harness-dev/harness/internal/llm"
)

// DefaultMaxTokens is used when Request.MaxTokens is zero; the Messages API
// requires a value.
const DefaultMaxTokens = 8192

// maxBreakpoints is the API's limit on cache_control markers per request.
const maxBreakpoints = 4

// lookback is how many blocks before a breakpoint the API searches for an
// earlier cache entry ("approximately 20"); we stay on the safe side of it.
const lookback = 20

// The wire structs below fix the field order of the body. messages comes
// last so a longer conversation's body extends a shorter one's.
type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	Stream    bool          `json:"stream"`
	System    []wireBlock   `json:"system,omitempty"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Messages  []wireMessage `json:"messages"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

// wireBlock is every content block type in one struct; omitempty keeps each
// type's encoding to its own fields. Text, Thinking and Content are pointers
// where the API needs the field even when empty.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    *string         `json:"signature,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      *string         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

var emptyObject = json.RawMessage(`{}`)

// toolInput returns a tool call's input as the API wants it: a JSON object.
// A model that produced invalid or non-object arguments has them stored as
// they came; sending them back verbatim would make the whole request fail,
// so they are replaced by {} (the tool result already told the model).
func toolInput(in json.RawMessage) json.RawMessage {
	in = bytes.TrimSpace(in)
	if len(in) == 0 || in[0] != '{' || !json.Valid(in) {
		return emptyObject
	}
	return in
}

func wireBlockOf(b llm.Block) (wireBlock, bool) {
	switch b.Type {
	case llm.BlockText:
		t := b.Text
		return wireBlock{Type: "text", Text: &t}, true
	case llm.BlockThinking:
		th, sig := b.Thinking, b.Signature
		return wireBlock{Type: "thinking", Thinking: &th, Signature: &sig}, true
	case llm.BlockToolUse:
		return wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: toolInput(b.Input)}, true
	case llm.BlockToolResult:
		c := b.Content
		return wireBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: &c, IsError: b.IsError}, true
	}
	return wireBlock{}, false
}

// buildRequest translates req into the wire body. It is a pure function of
// req: the same input gives the same bytes.
func buildRequest(req *llm.Request) wireRequest {
	w := wireRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	budget := maxBreakpoints
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
		budget--
	}
	if req.System != "" {
		s := req.System
		w.System = []wireBlock{{Type: "text", Text: &s, CacheControl: ephemeral}}
		budget--
	}

	for _, m := range req.Messages {
		wm := wireMessage{Role: string(m.Role), Content: []wireBlock{}}
		for _, b := range m.Blocks {
			if wb, ok := wireBlockOf(b); ok {
				wm.Content = append(wm.Content, wb)
			}
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, p := range breakpoints(w.Messages, budget) {
		w.Messages[p.msg].Content[p.block].CacheControl = ephemeral
	}

	if req.Reminder != "" {
		r := req.Reminder
		rb := wireBlock{Type: "text", Text: &r}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == string(llm.RoleUser) {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, rb)
		} else {
			w.Messages = append(w.Messages, wireMessage{Role: string(llm.RoleUser), Content: []wireBlock{rb}})
		}
	}
	if w.Messages == nil {
		w.Messages = []wireMessage{}
	}
	return w
}

type pos struct{ msg, block int }

// breakpoints chooses where cache_control goes among the stored messages,
// using at most budget markers: on the last stored block (the rolling
// breakpoint, which the next turn will read back), and, when that block is
// 20 or more blocks after the end of the previous user turn (where the last
// request's rolling breakpoint wrote its cache entry), on that earlier block
// as well, so the look-back still finds it. Thinking blocks cannot carry
// cache_control, so a marker falls back to the nearest earlier block.
func breakpoints(msgs []wireMessage, budget int) []pos {
	if budget <= 0 {
		return nil
	}
	var flat []pos
	for i, m := range msgs {
		for j := range m.Content {
			flat = append(flat, pos{i, j})
		}
	}
	last := markable(msgs, flat, len(flat)-1)
	if last < 0 {
		return nil
	}
	out := []pos{flat[last]}
	if budget < 2 {
		return out
	}
	// The previous request ended with the user message before the latest
	// assistant reply: find that message's last block.
	lastMsg := flat[last].msg
	prev := -1
	for i := lastMsg - 1; i >= 0; i-- {
		if msgs[i].Role == string(llm.RoleAssistant) {
			for k := i - 1; k >= 0; k-- {
				if msgs[k].Role == string(llm.RoleUser) && len(msgs[k].Content) > 0 {
					prev = k
					break
				}
			}
			break
		}
	}
	if prev < 0 {
		return out
	}
	idx := -1
	for k, p := range flat {
		if p.msg == prev && p.block == len(msgs[prev].Content)-1 {
			idx = k
		}
	}
	if idx = markable(msgs, flat, idx); idx >= 0 && last-idx >= lookback {
		out = append([]pos{flat[idx]}, out...)
	}
	return out
}

// markable returns the index in flat of the nearest block at or before i
// that may carry cache_control, or -1.
func markable(msgs []wireMessage, flat []pos, i int) int {
	for ; i >= 0; i-- {
		if msgs[flat[i].msg].Content[flat[i].block].Type != "thinking" {
			return i
		}
	}
	return -1
}

// marshal encodes w without HTML escaping, so code in prompts travels as
// written.
func marshal(w any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return marshal(buildRequest(req))
}
