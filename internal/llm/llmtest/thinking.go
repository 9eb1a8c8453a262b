package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Preserved thinking, as Anthropic documents it for its newer models
// (build-with-claude/preserved-thinking, …/prefix-checks,
// …/fix-bound-to-a-different-conversation): every thinking or
// redacted_thinking block sent back is checked against its prefix — the
// top-level system prompt, the tools and everything before the block in
// messages. If the prefix differs from what was sent when the block was
// produced, that block and every later thinking block are invalid: the
// request fails with a 400, or, when it sets
// thinking.block_binding.prefix_mismatch_behavior to "drop_block" (with the
// beta header), the invalid blocks are dropped and listed in the response's
// input_transformations.
//
// The fake binds a block by its signature: an HMAC of the canonical prefix
// and the block's own text. cache_control markers are not content and are
// left out of the canonical form, so moving a breakpoint is not an edit.

// betaThinkingBinding is the header value the docs name for drop_block.
const betaThinkingBinding = "thinking-binding-controls-2026-08-01"

// PrefixMismatchMessage is the error message for a thinking block at path
// ("messages.I.content.J") that failed the prefix check, as documented.
func PrefixMismatchMessage(path, kind string) string {
	return path + ": Invalid `signature` in `" + kind + "` block. The block is bound to a different conversation. " +
		"Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\"."
}

// PreservedThinking turns on the emulation for the Anthropic format: every
// reply carries a thinking block (with empty text when the reply scripts
// none, as with display "omitted") whose signature binds it to the request
// it answers, and every request's thinking blocks are checked.
func (s *Server) PreservedThinking() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preserved = true
}

// PrefixFailures returns every thinking block that failed the prefix check
// so far ("messages.I.content.J"), whether the request failed or the block
// was dropped.
func (s *Server) PrefixFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.reqs {
		out = append(out, r.PrefixFailures...)
	}
	return out
}

var signKey = []byte("llmtest preserved thinking")

// canonical returns v with every cache_control removed, marshalled with
// sorted keys.
func canonical(v any) []byte {
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				if k != "cache_control" {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return b
}

// anthropicBody is the part of a request the prefix check reads.
type anthropicBody struct {
	System   any `json:"system"`
	Tools    any `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Thinking *struct {
		BlockBinding *struct {
			PrefixMismatchBehavior string `json:"prefix_mismatch_behavior"`
		} `json:"block_binding"`
	} `json:"thinking"`
}

// prefixMAC hashes system, tools, messages[:msg] and the first blk content
// blocks of messages[msg], then the block's own payload.
func prefixMAC(b *anthropicBody, msg, blk int, payload string) string {
	m := hmac.New(sha256.New, signKey)
	m.Write(canonical(b.System))
	m.Write([]byte{0})
	m.Write(canonical(b.Tools))
	for i := 0; i < msg && i < len(b.Messages); i++ {
		m.Write([]byte{0})
		m.Write([]byte(b.Messages[i].Role))
		m.Write(canonical(contentList(b.Messages[i].Content)))
	}
	m.Write([]byte{1})
	if msg == len(b.Messages) {
		m.Write([]byte("assistant")) // the reply being signed
	} else if msg < len(b.Messages) {
		m.Write([]byte(b.Messages[msg].Role))
		for _, c := range contentList(b.Messages[msg].Content)[:blk] {
			m.Write(canonical(c))
		}
	}
	m.Write([]byte{2})
	m.Write([]byte(payload))
	return "llmtest:" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// contentList returns a message's content as blocks (a string is one text
// block, as the API treats it).
func contentList(c any) []any {
	switch x := c.(type) {
	case []any:
		return x
	case string:
		return []any{map[string]any{"type": "text", "text": x}}
	}
	return nil
}

// thinkingCheck is the outcome of checking one request.
type thinkingCheck struct {
	failures []string // paths of blocks that failed
	errBody  string   // non-empty: answer 400 with this body
	dropped  []string // paths dropped under drop_block
	sign     string   // signature for a thinking block heading the reply
}

// checkThinking runs the prefix check over body and signs the reply.
func checkThinking(body []byte, header map[string][]string, thinkingText string) thinkingCheck {
	var b anthropicBody
	if err := json.Unmarshal(body, &b); err != nil {
		return thinkingCheck{}
	}
	var out thinkingCheck
	invalid := false
	first := ""
	for i, m := range b.Messages {
		for j, c := range contentList(m.Content) {
			blk, _ := c.(map[string]any)
			typ, _ := blk["type"].(string)
			if typ != "thinking" && typ != "redacted_thinking" {
				continue
			}
			sig, _ := blk["signature"].(string)
			payload, _ := blk["thinking"].(string)
			if typ == "redacted_thinking" {
				payload, _ = blk["data"].(string)
				sig = "" // the fake never produces redacted blocks
			}
			path := fmt.Sprintf("messages.%d.content.%d", i, j)
			// Once one block fails, every later one is invalid too.
			if invalid || !hmac.Equal([]byte(sig), []byte(prefixMAC(&b, i, j, payload))) {
				if !invalid {
					first = path + "|" + typ
				}
				invalid = true
				out.failures = append(out.failures, path)
			}
		}
	}
	if invalid {
		drop := b.Thinking != nil && b.Thinking.BlockBinding != nil && b.Thinking.BlockBinding.PrefixMismatchBehavior == "drop_block"
		path, kind, _ := strings.Cut(first, "|")
		switch {
		case drop && !hasBeta(header, betaThinkingBinding):
			out.errBody = errorJSON("thinking.block_binding: this field requires the beta header `anthropic-beta: " + betaThinkingBinding + "`")
		case drop:
			out.dropped = out.failures
		default:
			out.errBody = errorJSON(PrefixMismatchMessage(path, kind))
		}
	}
	// The reply's thinking block heads a new assistant message after
	// every message of this request.
	out.sign = prefixMAC(&b, len(b.Messages), 0, thinkingText)
	return out
}

func hasBeta(h map[string][]string, want string) bool {
	for k, vs := range h {
		if !strings.EqualFold(k, "anthropic-beta") {
			continue
		}
		for _, v := range vs {
			for _, p := range strings.Split(v, ",") {
				if strings.TrimSpace(p) == want {
					return true
				}
			}
		}
	}
	return false
}

func errorJSON(msg string) string {
	return jsonString(obj{"type": "error", "error": obj{"type": "invalid_request_error", "message": msg}})
}
