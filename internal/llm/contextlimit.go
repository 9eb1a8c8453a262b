package llm

import (
	"errors"
	"regexp"
	"strconv"
	"sync"
)

// Ways servers state the sizes in a context-too-long error: Anthropic's
// "prompt is too long: 209353 tokens > 199999 maximum", OpenAI's "maximum
// context length is 4097 tokens. However, you requested 4431 tokens (3431 in
// the messages, 1000 in the completion)" or "…your messages resulted in N
// tokens", llama.cpp's "request (5000 tokens) exceeds the available context
// size (4096 tokens)", OpenRouter's "This endpoint's maximum context length
// is 32768 tokens. However, you requested about 42832 tokens (42832 of text
// input[, M in the output])", and Anthropic's for a thinking request, which
// counts max_tokens in: "input length and `max_tokens` exceed context
// limit: 178959 + 64000 > 200000, …".
var (
	reAnthropicSizes = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+) tokens > (\d+) maximum`) })
	reAnthropicSum   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`exceed context limit: (\d+) \+ (\d+) > (\d+)`) })
	reOpenAILimit    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`maximum context length is (\d+) tokens`) })
	reOpenAIPrompt   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:resulted in|requested) (\d+) tokens`) })
	reOpenAIOutput   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+) in the (?:completion|output)`) })
	reRouterInput    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+) of text input`) })
	reLlamaSizes     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`)
	})
)

// ContextLimit reads the prompt size and the prompt limit a provider's
// context-too-long error states, each 0 when it states none. The limit is
// the most a prompt may hold: where the server counts the reply's reserve
// in its window (OpenAI's "in the completion"), that reserve is taken off.
func ContextLimit(err error) (prompt, limit int) {
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrContextTooLong {
		return 0, 0
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	msg := e.Message
	if m := reAnthropicSizes().FindStringSubmatch(msg); m != nil {
		return atoi(m[1]), atoi(m[2])
	}
	if m := reAnthropicSum().FindStringSubmatch(msg); m != nil {
		// The prompt may take the window less max_tokens.
		return atoi(m[1]), max(atoi(m[3])-atoi(m[2]), 0)
	}
	if m := reLlamaSizes().FindStringSubmatch(msg); m != nil {
		return atoi(m[1]), atoi(m[2])
	}
	if m := reOpenAILimit().FindStringSubmatch(msg); m != nil {
		limit = atoi(m[1])
		if p := reOpenAIPrompt().FindStringSubmatch(msg); p != nil {
			prompt = atoi(p[1])
		}
		if o := reOpenAIOutput().FindStringSubmatch(msg); o != nil {
			out := atoi(o[1])
			limit -= out
			prompt -= out
		}
		if p := reRouterInput().FindStringSubmatch(msg); p != nil {
			// OpenRouter's "requested about N tokens (P of text input,
			// M in the output)": the prompt is stated alone.
			prompt = atoi(p[1])
		}
		return max(prompt, 0), max(limit, 0)
	}
	return 0, 0
}
