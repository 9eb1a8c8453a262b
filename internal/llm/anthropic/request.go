package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/cacheplan"
)

// DefaultMaxTokens is used when Request.MaxTokens is zero; the Messages API
// requires a value.
const DefaultMaxTokens = 8192

// The wire structs below fix the field order of the body. messages comes
// last so a longer conversation's body extends a shorter one's.
type wireRequest struct {
	Model        string        `json:"model"`
	MaxTokens    int           `json:"max_tokens"`
	Stream       bool          `json:"stream"`
	Thinking     *wireThinking `json:"thinking,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	System       []wireBlock   `json:"system,omitempty"`
	Tools        []wireTool    `json:"tools,omitempty"`
	Messages     []wireMessage `json:"messages"`
}

// wireThinking is the thinking parameter: type "adaptive", "enabled" (with
// budget_tokens) or "disabled"; display "summarized" where the model omits
// reasoning text by default; block_binding for preserved-thinking models.
type wireThinking struct {
	Type         string        `json:"type"`
	BudgetTokens int           `json:"budget_tokens,omitempty"`
	Display      string        `json:"display,omitempty"`
	BlockBinding *blockBinding `json:"block_binding,omitempty"`
}

type blockBinding struct {
	PrefixMismatchBehavior string `json:"prefix_mismatch_behavior"`
}

type outputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// BetaThinkingBinding is the beta header value that lets a request set
// thinking.block_binding (Anthropic, "Fix a thinking block bound to a
// different conversation").
const BetaThinkingBinding = "thinking-binding-controls-2026-08-01"

// thinkingOf translates the neutral setting; nil sends no parameter.
func thinkingOf(t llm.Thinking, maxTokens *int) *wireThinking {
	var w *wireThinking
	switch t.Mode {
	case llm.ThinkingOff:
		return &wireThinking{Type: "disabled"}
	case llm.ThinkingAdaptive:
		w = &wireThinking{Type: "adaptive"}
	case llm.ThinkingBudget:
		b := max(t.Budget, llm.MinThinkingBudget)
		// budget_tokens must stay below max_tokens (a 400 otherwise).
		if *maxTokens <= b {
			*maxTokens = b + DefaultMaxTokens
		}
		w = &wireThinking{Type: "enabled", BudgetTokens: b}
	default:
		if !t.DropBlock {
			return nil
		}
		// Preserved-thinking models think adaptively by default, so
		// naming it changes nothing but carries the binding setting.
		w = &wireThinking{Type: "adaptive"}
	}
	if t.Summarized {
		w.Display = "summarized"
	}
	if t.DropBlock {
		w.BlockBinding = &blockBinding{PrefixMismatchBehavior: "drop_block"}
	}
	return w
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
	// origin maps each Content element to its index in the llm.Message's
	// Blocks, for Breakpoints.
	origin []int
}

// wireBlock is every content block type in one struct; omitempty keeps each
// type's encoding to its own fields. Text, Thinking and Content are pointers
// where the API needs the field even when empty.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    *string         `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      any             `json:"content,omitempty"` // *string, or []wireBlock with an image
	IsError      bool            `json:"is_error,omitempty"`
	Source       *imageSource    `json:"source,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// imageSource is an image block's source: base64 inline.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func imageBlock(img *llm.Image) wireBlock {
	return wireBlock{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}}
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
	case llm.BlockRedactedThinking:
		return wireBlock{Type: "redacted_thinking", Data: b.Data}, true
	case llm.BlockToolUse:
		return wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: toolInput(b.Input)}, true
	case llm.BlockToolResult:
		c := b.Content
		if b.Image != nil {
			// A tool result may hold images beside its text.
			return wireBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: []wireBlock{{Type: "text", Text: &c}, imageBlock(b.Image)}, IsError: b.IsError}, true
		}
		return wireBlock{Type: "tool_result", ToolUseID: b.ToolUseID, Content: &c, IsError: b.IsError}, true
	case llm.BlockImage:
		if b.Image == nil {
			return wireBlock{}, false
		}
		return imageBlock(b.Image), true
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
	w.Thinking = thinkingOf(req.Thinking, &w.MaxTokens)
	if req.Thinking.Effort != "" && req.Thinking.Mode != llm.ThinkingOff {
		w.OutputConfig = &outputConfig{Effort: req.Thinking.Effort}
	}
	plan := cacheplan.Of(req)
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.System != "" {
		s := req.System
		w.System = []wireBlock{{Type: "text", Text: &s}}
		if plan.System {
			w.System[0].CacheControl = ephemeral
		}
	}
	if n := len(w.Tools); n > 0 && plan.Tool {
		w.Tools[n-1].CacheControl = ephemeral
	}

	for _, m := range req.Messages {
		wm := wireMessage{Role: string(m.Role), Content: []wireBlock{}}
		for i, b := range m.Blocks {
			if !cacheplan.OnWire(b) {
				continue
			}
			if wb, ok := wireBlockOf(b); ok {
				wm.Content = append(wm.Content, wb)
				wm.origin = append(wm.origin, i)
			}
		}
		if len(wm.Content) == 0 && len(m.Blocks) > 0 {
			// Only blank text: the API also rejects empty content.
			t := "(empty)"
			wm.Content = append(wm.Content, wireBlock{Type: "text", Text: &t})
			wm.origin = append(wm.origin, 0)
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, r := range plan.Blocks {
		wm := &w.Messages[r.Message]
		if j := slices.Index(wm.origin, r.Block); j >= 0 {
			wm.Content[j].CacheControl = ephemeral
		}
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

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return llm.MarshalBody(buildRequest(req))
}
