package llm

import (
	"encoding/json"
	"strings"
)

// Role is who wrote a message.
type Role string

// Roles. Tool results travel in a user message, as in Anthropic's API; the
// OpenAI adapter splits them into "tool" messages on the wire.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType says which fields of a Block are meaningful.
type BlockType string

// Block types.
const (
	BlockText     BlockType = "text"
	BlockThinking BlockType = "thinking"
	// BlockRedactedThinking is reasoning the provider encrypted: only Data
	// is meaningful, and it goes back exactly as received.
	BlockRedactedThinking BlockType = "redacted_thinking"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
)

// Block is one piece of a message. It is also the stored form in the session
// log, so its JSON encoding is part of the log format: add fields, never
// rename them.
type Block struct {
	Type BlockType `json:"type"`

	// Text is the text of a text block.
	Text string `json:"text,omitempty"`

	// Thinking and Signature carry a reasoning block. Anthropic requires the
	// signature to be sent back unchanged with tool-use turns, and on
	// preserved-thinking models it binds the block to everything before it
	// (system, tools, earlier messages): the block is stored and re-sent
	// byte for byte, an empty Thinking included (display "omitted").
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Data is the opaque payload of a redacted_thinking block.
	Data string `json:"data,omitempty"`

	// ID, Name and Input describe a tool call (tool_use).
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// ThoughtSignature is the opaque signature Gemini attaches to a tool
	// call (extra_content.google.thought_signature on its OpenAI endpoint),
	// kept verbatim: Gemini 3 answers 400 when a call comes back without it.
	ThoughtSignature string `json:"thought_signature,omitempty"`
	// ReasoningDetails is OpenRouter's reasoning_details array for a
	// thinking block, kept verbatim (merged across stream deltas) so it can
	// be sent back with the assistant message it came with.
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`

	// Item is the OpenAI Responses API output item the block came from
	// (package llm/responses). A reasoning item is kept whole, verbatim,
	// encrypted_content included, and sent back exactly as received; for a
	// message or function call only its type and id are kept (the content
	// lives in the block), so the item that followed a reasoning item goes
	// back under the same id.
	Item json.RawMessage `json:"item,omitempty"`

	// ToolUseID, Content and IsError describe a tool result.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`

	// Layer records which context layer last rewrote this block's content
	// (see package history). It is metadata for the harness and never sent
	// to a provider; keeping it out of the text means a tool output that
	// merely contains a marker cannot fool the layers.
	Layer string `json:"layer,omitempty"`
}

// LayerFeedback is the Layer of a block the harness wrote as feedback on a
// malformed reply (an unknown tool, arguments that do not parse, a reply
// cut at the output limit): the harness's own words, so package history
// may fold a repeat of them. It is set where the feedback is written.
const LayerFeedback = "feedback"

// Blank reports whether b is a text block with nothing but white space.
// Such blocks are never sent: Anthropic answers a request holding one with
// 400 "text content blocks must contain non-whitespace text", and would
// answer every later request of the session the same way.
func (b Block) Blank() bool {
	return b.Type == BlockText && strings.TrimSpace(b.Text) == ""
}

// Message is one turn of the conversation.
type Message struct {
	Role   Role    `json:"role"`
	Blocks []Block `json:"content"`
}

// Text returns a user or assistant message holding a single text block.
func Text(role Role, text string) Message {
	return Message{Role: role, Blocks: []Block{{Type: BlockText, Text: text}}}
}

// ToolCalls returns the tool_use blocks of m in order.
func (m Message) ToolCalls() []Block {
	var out []Block
	for _, b := range m.Blocks {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// IsThinking reports whether b is a reasoning block of either kind.
func (b Block) IsThinking() bool {
	return b.Type == BlockThinking || b.Type == BlockRedactedThinking
}

// HasThinking reports whether m carries a reasoning block.
func (m Message) HasThinking() bool {
	for _, b := range m.Blocks {
		if b.IsThinking() {
			return true
		}
	}
	return false
}

// WithoutThinking returns m without its reasoning blocks (a copy when it
// had any). An assistant message left empty keeps a placeholder text block,
// since APIs reject empty messages.
func (m Message) WithoutThinking() Message {
	if !m.HasThinking() {
		return m
	}
	out := Message{Role: m.Role}
	for _, b := range m.Blocks {
		if !b.IsThinking() {
			out.Blocks = append(out.Blocks, b)
		}
	}
	if len(out.Blocks) == 0 {
		out.Blocks = []Block{{Type: BlockText, Text: "(reasoning removed)"}}
	}
	return out
}

// PlainText concatenates the text blocks of m.
func (m Message) PlainText() string {
	var s string
	for _, b := range m.Blocks {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// Tool is a tool definition as the model sees it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}
