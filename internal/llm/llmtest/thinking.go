package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
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
	Model    string `json:"model"`
	System   any    `json:"system"`
	Tools    any    `json:"tools"`
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
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// textMAC binds a block's text to the model that wrote it.
func textMAC(model, text string) string {
	m := hmac.New(sha256.New, signKey)
	m.Write([]byte(model))
	m.Write([]byte{0})
	m.Write([]byte(text))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sign is the signature the server gives a thinking block: the model (so a
// block can be told to come from another one, A4), a MAC of its text (A3:
// any edit shows) and, in preserved-thinking mode, the MAC of its prefix
// (A5).
func sign(model, text, prefix string) string {
	s := "llmtest:" + base64.RawURLEncoding.EncodeToString([]byte(model)) + "." + textMAC(model, text)
	if prefix != "" {
		s += "." + prefix
	}
	return s
}

// parsedSig is a signature taken apart; ok is false for one the server
// never issued (forged, empty, from a real API).
type parsedSig struct {
	model, prefix string
	ok            bool
}

func parseSig(sig, text string) parsedSig {
	rest, found := strings.CutPrefix(sig, "llmtest:")
	parts := strings.Split(rest, ".")
	if !found || len(parts) < 2 || len(parts) > 3 {
		return parsedSig{}
	}
	model, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || !hmac.Equal([]byte(parts[1]), []byte(textMAC(string(model), text))) {
		return parsedSig{}
	}
	p := parsedSig{model: string(model), ok: true}
	if len(parts) == 3 {
		p.prefix = parts[2]
	}
	return p
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
	failures []string // paths of blocks that failed the prefix check
	errBody  string   // non-empty: answer 400 with this body
	dropped  []string // paths dropped under drop_block
	silent   []string // paths dropped without a word: another model's blocks (A4, late 2026)
}

// checkThinking checks every thinking block of body: its signature (A3 for
// the latest assistant message, A4 elsewhere) and, when preserved, its
// prefix (A5).
func checkThinking(body []byte, header map[string][]string, preserved bool) thinkingCheck {
	var b anthropicBody
	if err := json.Unmarshal(body, &b); err != nil {
		return thinkingCheck{}
	}
	var out thinkingCheck
	latest := -1
	for i, m := range b.Messages {
		if m.Role == "assistant" {
			latest = i
		}
	}
	invalid := false
	first := ""
	for i, m := range b.Messages {
		for j, c := range contentList(m.Content) {
			blk, _ := c.(map[string]any)
			typ, _ := blk["type"].(string)
			if !isThinking(typ) {
				continue
			}
			sig, _ := blk["signature"].(string)
			payload, _ := blk["thinking"].(string)
			if typ == "redacted_thinking" {
				// The fake never redacts: the data is checked as a
				// signature over no text, which only a forged block fails.
				sig, _ = blk["data"].(string)
				payload = ""
			}
			ps := parseSig(sig, payload)
			switch {
			case !ps.ok && i == latest:
				out.errBody = errorJSON(fmt.Sprintf(msgA3, i, j))
				return out
			case !ps.ok:
				out.errBody = errorJSON(fmt.Sprintf(msgA4, i, j))
				return out
			case modelKey(ps.model) != modelKey(b.Model) && llm.PreservedThinking(b.Model):
				// Preserved-thinking models drop a block they cannot read.
				out.silent = append(out.silent, fmt.Sprintf("messages.%d.content.%d", i, j))
				continue
			case modelKey(ps.model) != modelKey(b.Model):
				out.errBody = errorJSON(fmt.Sprintf(msgA4, i, j))
				return out
			}
			if !preserved {
				continue
			}
			path := fmt.Sprintf("messages.%d.content.%d", i, j)
			// Once one block fails, every later one is invalid too.
			if invalid || !hmac.Equal([]byte(ps.prefix), []byte(prefixMAC(&b, i, j, payload))) {
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
	return out
}

// signReply signs the thinking block heading the reply to body, whose text
// is text. In preserved mode it is bound to every message of the request:
// the reply is a new assistant message after them.
func signReply(body []byte, text string, preserved bool) string {
	var b anthropicBody
	_ = json.Unmarshal(body, &b)
	prefix := ""
	if preserved {
		prefix = prefixMAC(&b, len(b.Messages), 0, text)
	}
	return sign(b.Model, text, prefix)
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
	return errorString(obj{"type": "error", "error": obj{"type": "invalid_request_error", "message": msg}})
}
