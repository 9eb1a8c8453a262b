package history

import "github.com/harness-dev/harness/internal/llm"

// charsPerToken is the estimator's ratio. Code and logs run 3 to 4 chars a
// token; the provider's usage corrects the total after every reply, so only
// the few messages added since are estimated.
const charsPerToken = 4

// Per-message and per-block framing the provider adds (role tags, ids, JSON
// of a tool call).
const (
	messageOverhead = 4
	blockOverhead   = 3
	toolOverhead    = 12
)

// Estimate returns a token estimate of one message.
func Estimate(m llm.Message) int {
	n := messageOverhead
	for _, b := range m.Blocks {
		n += blockOverhead
		switch b.Type {
		case llm.BlockText:
			n += len(b.Text) / charsPerToken
		case llm.BlockThinking:
			n += len(b.Thinking) / charsPerToken
		case llm.BlockToolUse:
			n += toolOverhead + (len(b.Name)+len(b.Input))/charsPerToken
		case llm.BlockToolResult:
			n += toolOverhead + len(b.Content)/charsPerToken
		}
		if b.Image != nil {
			n += b.Image.Tokens()
		}
	}
	return n
}

// EstimateText returns a token estimate of a string (a system prompt, a
// reminder).
func EstimateText(s string) int { return len(s) / charsPerToken }
