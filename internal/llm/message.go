package llm

import "encoding/json"

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
	BlockText       BlockType = "text"
	BlockThinking   BlockType = "thinking"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Block is one piece of a message. It is also the stored form in the session
// log, so its JSON encoding is part of the log format: add fields, never
// rename them.
type Block struct {
	Type BlockType `json:"type"`

	// Text is the text of a text block.
	Text string `json:"text,omitempty"`

	// Thinking and Signature carry a reasoning block. Anthropic requires the
	// signature to be sent back unchanged with tool-use turns.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`

	// ID, Name and Input describe a tool call (tool_use).
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

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
