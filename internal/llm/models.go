package llm

import "strings"

// preservedThinking are the model families that run Anthropic's prefix
// check on thinking blocks sent back (build-with-claude/preserved-thinking,
// supportedModels): a block whose system, tools or earlier messages changed
// after it was produced fails the request or is dropped. Names match by
// prefix, so dated ids and variants are covered.
var preservedThinking = []string{
	"claude-fable-5", "claude-mythos-5", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5",
}

// PreservedThinking reports whether model checks the prefix of the thinking
// blocks it is sent back. Router prefixes ("anthropic/") and dotted aliases
// ("claude-sonnet-5.5") are accepted.
func PreservedThinking(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.ReplaceAll(m, ".", "-")
	for _, p := range preservedThinking {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// AppendOnly reports whether a session with this model and endpoint must
// never change what it already sent: preserved-thinking models (the prefix
// check), and DeepSeek, whose prefix cache stores units that end at each
// user input and model output and only hits on a full match of a unit, so
// a reminder appended and later removed misses every turn.
func AppendOnly(model, baseURL string) bool {
	m := strings.ToLower(model)
	return PreservedThinking(model) || strings.Contains(m, "deepseek") || strings.Contains(strings.ToLower(baseURL), "deepseek.com")
}
