package llmtest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// The prompt a server reports is the prompt it counted, split the way its
// prefix cache splits it: Anthropic reads back the longest prefix ending
// at a cache breakpoint of an earlier request that this one repeats, and
// writes the rest up to its own last breakpoint (docs: prompt-caching);
// OpenAI-compatible servers cache any repeated prefix of 1024 tokens or
// more, in 128-token steps (docs: guides/prompt-caching). So input +
// cache read + cache write (prompt_tokens for OpenAI) is always the whole
// prompt, as DESIGN.md's token accounting assumes.

// keepBodies is how many earlier requests the cache remembers.
const keepBodies = 8

// CacheTTL makes the emulated prefix cache forget a request not read
// for ttl by the clock now, as Anthropic's does after five minutes (its
// default ephemeral TTL) and OpenAI's after minutes of inactivity; a read
// refreshes it. Without it entries never expire.
func (s *Server) CacheTTL(ttl time.Duration, now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ttl, s.clock = ttl, now
}

// live reports whether the cache entry i has not expired. Called with
// s.mu held.
func (s *Server) live(i int) bool {
	return s.ttl <= 0 || s.clock == nil || i >= len(s.used) || s.clock().Sub(s.used[i]) <= s.ttl
}

// remember keeps body for the cache emulation. Called with s.mu held.
func (s *Server) remember(body []byte) {
	var now time.Time
	if s.clock != nil {
		now = s.clock()
	}
	s.bodies = append(s.bodies, body)
	s.used = append(s.used, now)
	if len(s.bodies) > keepBodies {
		s.bodies = s.bodies[len(s.bodies)-keepBodies:]
		s.used = s.used[len(s.used)-keepBodies:]
	}
}

// touch refreshes the entries whose prefix a request read. Called with
// s.mu held.
func (s *Server) touch(i int) {
	if s.clock != nil && i < len(s.used) {
		s.used[i] = s.clock()
	}
}

// marker is where a cache breakpoint sits in an Anthropic body: the
// adapter writes cache_control as a block's last field, so the cached
// prefix (up to and including that block) ends just before it.
var marker = []byte(`,"cache_control"`)

func markers(body []byte) []int {
	var out []int
	for off := 0; ; {
		i := bytes.Index(body[off:], marker)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(marker)
	}
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// promptUsage splits the counted prompt of body. Called with s.mu held.
func (s *Server) promptUsage(f Format, body []byte, count func([]byte) int) llm.Usage {
	total := count(body)
	tokens := func(n int) int { return min(count(body[:n]), total) }
	if f == FormatAnthropic {
		read := 0
		for i, prev := range s.bodies {
			if !s.live(i) {
				continue
			}
			lcp := commonPrefix(body, prev)
			for _, m := range markers(prev) {
				if m <= lcp && m > read {
					read = m
					s.touch(i)
				}
			}
		}
		ms := markers(body)
		write := 0
		if len(ms) > 0 && ms[len(ms)-1] > read {
			write = ms[len(ms)-1]
		}
		r := tokens(read)
		w := 0
		if write > 0 {
			w = tokens(write) - r
		}
		return llm.Usage{Input: total - r - w, CacheRead: r, CacheWrite: w}
	}
	lcp := 0
	for i, prev := range s.bodies {
		if s.live(i) {
			lcp = max(lcp, commonPrefix(body, prev))
		}
	}
	cached := 0
	if t := tokens(lcp); t >= 1024 {
		cached = t / 128 * 128
	}
	return llm.Usage{Input: total - cached, CacheRead: cached}
}

// overflowBody is the server's answer to a prompt of n tokens over limit,
// in the words of the server the modes emulate. thinking says the request
// had thinking on (Anthropic format). Called with s.mu held.
func (s *Server) overflowBody(f Format, n, limit, maxTokens int, thinking bool) string {
	if f == FormatAnthropic {
		if thinking && n <= limit {
			return errorJSON(anthropicInputMaxTokens(n, maxTokens, limit))
		}
		return errorJSON(fmt.Sprintf("prompt is too long: %d tokens > %d maximum", n, limit))
	}
	deepseek := s.has(DeepSeekThinking)
	gemini := s.has(GeminiThoughtSignatures) || s.has(GeminiRejectsUnknown)
	openrouter := s.has(OpenRouterReasoning) || s.has(OpenRouterCache)
	switch {
	case deepseek:
		// DeepSeek counts the reply's reserve in (evalstate/fast-agent#621).
		return errorString(obj{"error": obj{
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", limit, n+maxTokens, n, maxTokens),
			"type":    "invalid_request_error", "param": nil, "code": "invalid_request_error"}})
	case gemini:
		return fmt.Sprintf(`[{"error":{"code":400,"message":"The input token count (%d) exceeds the maximum number of tokens allowed (%d).","status":"INVALID_ARGUMENT"}}]`, n, limit)
	case openrouter:
		// OpenHands/OpenHands#9937 (with max_tokens: "…, M in the
		// output"); refly-ai/refly#1177, topoteretes/cognee#1061
		// (without).
		parts := fmt.Sprintf("%d of text input", n)
		if maxTokens > 0 {
			parts += fmt.Sprintf(", %d in the output", maxTokens)
		}
		return errorString(obj{"error": obj{"code": 400,
			"message": fmt.Sprintf("This endpoint's maximum context length is %d tokens. However, you requested about %d tokens (%s). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", limit, n+maxTokens, parts)}})
	}
	return errorString(obj{"error": obj{
		"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, n),
		"type":    "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
}

// anthropicInputMaxTokens is the Messages API's 400 for a thinking request
// whose prompt fits the window but whose prompt plus max_tokens does not.
// With extended thinking, max_tokens (the thinking budget included) is a
// strict limit: "if prompt tokens + max_tokens exceeds the context window
// size, the system returns a validation error" instead of lowering
// max_tokens as it did for earlier models (docs:
// docs.anthropic.com/ja/docs/about-claude/models/extended-thinking-models,
// "max_tokens and context window size"). The page states it of the models
// that support extended thinking; the fake enforces it on requests with
// thinking on, what it is documented for with certainty (harness reserves
// max_tokens on every request, so the wider reading is covered too). The
// text is
// the one clients report, word for word: continuedev/continue#6080
// ("199759 + 8192 > 200000") and #8454, anthropics/claude-code#228 and
// #408, kortix-ai/suna#172 ("174167 + 64000 > 200000"),
// stackblitz/bolt.new#7414. A prompt over the window by itself still gets
// "prompt is too long". Newer models may instead end the reply early with
// stop_reason model_context_window_exceeded (anthropics/anthropic-sdk-go#295,
// turnstonelabs/turnstone#1164); the fake keeps the 400, the stricter of
// the two, and harness's reserve (history.Config.Reserve) avoids both.
func anthropicInputMaxTokens(n, maxTokens, limit int) string {
	return fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", n, maxTokens, limit)
}
