package responses

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// The wire structs fix the field order of the body; input comes last so a
// longer conversation's body extends a shorter one's, byte for byte.
type wireRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Stream          bool           `json:"stream"`
	Store           bool           `json:"store"`
	Include         []string       `json:"include,omitempty"`
	PromptCacheKey  string         `json:"prompt_cache_key,omitempty"`
	Reasoning       *wireReasoning `json:"reasoning,omitempty"`
	Tools           []wireTool     `json:"tools,omitempty"`
	Input           []any          `json:"input"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// Input items. A message's content is a list of typed parts, as Codex
// sends it; an id is sent only where the reasoning item it belongs with is
// sent too (see assistantItems).
type wireMessage struct {
	Type    string     `json:"type"`
	ID      string     `json:"id,omitempty"`
	Role    string     `json:"role"`
	Content []wirePart `json:"content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireCall struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// options are the request settings that are not in llm.Request: what the
// provider was configured with and what the server taught it.
type options struct {
	store     bool
	stream    bool
	reasoning bool // the model reasons: send reasoning and include
	summary   bool // ask for reasoning summaries
	cacheKey  bool
	// keep says whether a stored reasoning item is sent back; nil keeps
	// all (see Provider.Stream on items another account encrypted).
	keep func(id string) bool
}

// encryptedContent is what the server must return for reasoning to survive
// store: false.
const encryptedContent = "reasoning.encrypted_content"

// buildRequest translates req into the wire body. It is a pure function of
// its arguments: the same input, the same bytes.
func buildRequest(req *llm.Request, o options) wireRequest {
	w := wireRequest{
		Model:           req.Model,
		Instructions:    req.System,
		MaxOutputTokens: req.MaxTokens,
		Stream:          o.stream,
		Store:           o.store,
		Input:           []any{},
	}
	if o.cacheKey {
		w.PromptCacheKey = req.SessionID
	}
	if o.reasoning {
		if !o.store {
			// Without it a reasoning item cannot be sent back: the server
			// keeps nothing, and answers "Item with id 'rs_…' not found".
			w.Include = []string{encryptedContent}
		}
		r := &wireReasoning{Effort: effort(req.Thinking)}
		if o.summary {
			r.Summary = "auto"
		}
		if *r != (wireReasoning{}) {
			w.Reasoning = r
		}
	}
	for _, t := range req.Tools {
		params := t.Schema
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			w.Input = append(w.Input, assistantItems(m, o.keep)...)
		} else {
			w.Input = append(w.Input, userItems(m)...)
		}
	}
	if strings.TrimSpace(req.Reminder) != "" {
		w.Input = append(w.Input, userMessage(req.Reminder))
	}
	return w
}

// effort is EFFORT as reasoning.effort ("" sends none). OpenAI's top level
// is xhigh, so max asks for that. THINKING=off sends nothing, as the Chat
// adapter does: "none" exists only from gpt-5.1 on and "minimal" not on
// every later model, and a model that cannot stop reasoning would refuse
// the request.
func effort(t llm.Thinking) string {
	switch {
	case t.Mode == llm.ThinkingOff:
		return ""
	case t.Effort == "max":
		return "xhigh"
	}
	return t.Effort
}

func userMessage(text string) wireMessage {
	return wireMessage{Type: "message", Role: "user", Content: []wirePart{{Type: "input_text", Text: text}}}
}

// userItems maps a stored user message: tool results become
// function_call_output items (first, right after the calls they answer),
// text a user message.
func userItems(m llm.Message) []any {
	var out []any
	var text []string
	for _, b := range m.Blocks {
		switch {
		case b.Type == llm.BlockToolResult:
			out = append(out, wireOutput{Type: "function_call_output", CallID: b.ToolUseID, Output: b.Content})
		case b.Blank():
		case b.Type == llm.BlockText:
			text = append(text, b.Text)
		}
	}
	if len(text) > 0 || len(out) == 0 {
		out = append(out, userMessage(strings.Join(text, "\n\n")))
	}
	return out
}

// assistantItems maps a stored assistant message back to the output items
// it came from, in their order: reasoning items exactly as received, text
// as an assistant message, tool calls as function_call items with their
// call_id. Item ids go back only when the message still holds a reasoning
// item: the API pairs a reasoning item with the item that followed it by
// id ("Item 'rs_…' of type 'reasoning' was provided without its required
// following item"), and an id whose reasoning was removed (compaction)
// fails the other way ("… was provided without its required 'reasoning'
// item").
func assistantItems(m llm.Message, keep func(string) bool) []any {
	sent := func(b llm.Block) bool {
		return b.Type == llm.BlockThinking && isReasoningItem(b.Item) && (keep == nil || keep(itemID(b.Item)))
	}
	withReasoning := false
	for _, b := range m.Blocks {
		if sent(b) {
			withReasoning = true
		}
	}
	id := func(b llm.Block) string {
		if !withReasoning {
			return ""
		}
		return itemID(b.Item)
	}
	var out []any
	for _, b := range m.Blocks {
		switch {
		case b.Type == llm.BlockThinking:
			// Reasoning from another API has no place here; a Responses
			// reasoning item goes back whole.
			if sent(b) {
				out = append(out, b.Item)
			}
		case b.Blank():
		case b.Type == llm.BlockText:
			out = append(out, wireMessage{Type: "message", ID: id(b), Role: "assistant", Content: []wirePart{{Type: "output_text", Text: b.Text}}})
		case b.Type == llm.BlockToolUse:
			out = append(out, wireCall{Type: "function_call", ID: id(b), CallID: b.ID, Name: b.Name, Arguments: arguments(b.Input)})
		}
	}
	if len(out) == 0 {
		out = append(out, wireMessage{Type: "message", Role: "assistant", Content: []wirePart{{Type: "output_text", Text: "(no reply)"}}})
	}
	return out
}

// itemHead is the part of a stored item the request needs.
type itemHead struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func head(raw json.RawMessage) itemHead {
	var h itemHead
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &h)
	}
	return h
}

func isReasoningItem(raw json.RawMessage) bool { return head(raw).Type == "reasoning" }

func itemID(raw json.RawMessage) string { return head(raw).ID }

// arguments returns a stored tool input as the arguments string. Inputs
// the model produced as invalid JSON were stored as a JSON string holding
// the raw text; they go back as that text.
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
