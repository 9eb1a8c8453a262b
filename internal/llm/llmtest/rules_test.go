package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Request bodies are built by hand here: the rules concern fields
// (temperature, tool_choice, context_management) harness's adapters never
// send, and orders they never produce.

type m = map[string]any

func user(content ...any) m      { return m{"role": "user", "content": content} }
func assistant(content ...any) m { return m{"role": "assistant", "content": content} }
func text(s string) m            { return m{"type": "text", "text": s} }
func use(id string) m {
	return m{"type": "tool_use", "id": id, "name": "bash", "input": m{"command": "ls"}}
}
func result(id string) m { return m{"type": "tool_result", "tool_use_id": id, "content": "a.go"} }

// think is a thinking block the server signed for model (outside
// preserved mode), with text.
func think(model, s string) m {
	return m{"type": "thinking", "thinking": s, "signature": sign(model, s, "")}
}

// req is a Messages body: model, max_tokens 4096, the extra fields, and
// the messages.
func req(model string, extra m, msgs ...m) []byte {
	b := m{"model": model, "max_tokens": 4096, "messages": msgs}
	for k, v := range extra {
		b[k] = v
	}
	out, _ := json.Marshal(b)
	return out
}

var (
	sonnet45 = "claude-sonnet-4-5"
	budget   = m{"thinking": m{"type": "enabled", "budget_tokens": 2048}}
)

func with(a, b m) m {
	out := m{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func post(t *testing.T, srv *Server, path string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(string(body)))
	r.Header.Set("content-type", "application/json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAnthropicRules sends, for each documented rule, a request that
// breaks it and one that keeps it: the first must get the 400 with the
// documented text, the second must pass.
func TestAnthropicRules(t *testing.T) {
	good := think(sonnet45, "I will list.")
	loop := func(a m) []m { return []m{user(text("go")), a, user(result("t1"))} }
	tests := []struct {
		name      string
		preserved bool
		beta      string // a beta header under which the breaking request passes
		bad, ok   []byte
		want      string // the error message, exactly as documented
	}{
		{name: "A1 open tool loop without thinking (tool_use first)",
			bad:  req(sonnet45, budget, loop(assistant(use("t1")))...),
			ok:   req(sonnet45, budget, loop(assistant(good, use("t1")))...),
			want: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"},
		{name: "A1 found text, thinking on by default on a preserved-thinking server",
			preserved: true,
			bad:       req("claude-sonnet-5-5", nil, loop(assistant(text("Listing."), use("t1")))...),
			// Closing the round: the call and its result as plain text.
			ok:   req("claude-sonnet-5-5", nil, user(text("go")), assistant(text("Listing.")), user(text("I ran ls: a.go"))),
			want: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."},
		{name: "A1 thinking off: no requirement",
			bad:  req(sonnet45, budget, loop(assistant(use("t1")))...),
			ok:   req(sonnet45, m{"thinking": m{"type": "disabled"}}, loop(assistant(use("t1")))...),
			want: "must start with a thinking block"},
		{name: "A2 text before thinking",
			bad:  req(sonnet45, budget, user(text("go")), assistant(text("Hm."), good, text("done")), user(text("next"))),
			ok:   req(sonnet45, budget, user(text("go")), assistant(good, text("Hm."), text("done")), user(text("next"))),
			want: "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found text."},
		{name: "A3 latest assistant thinking modified",
			bad: req(sonnet45, budget, loop(assistant(m{"type": "thinking", "thinking": "I will list!", "signature": good["signature"]}, use("t1")))...),
			ok:  req(sonnet45, budget, loop(assistant(good, use("t1")))...),
			want: "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. " +
				"These blocks must remain as they were in the original response."},
		{name: "A3 empty-text thinking block trimmed to a placeholder",
			bad: req(sonnet45, budget, user(text("go")), assistant(good, use("t0"), m{"type": "thinking", "thinking": "", "signature": ""}, use("t1")),
				user(result("t0"), result("t1"))),
			ok: req(sonnet45, budget, user(text("go")), assistant(good, use("t0"), think(sonnet45, ""), use("t1")),
				user(result("t0"), result("t1"))),
			want: "messages.1.content.2: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified."},
		{name: "A4 forged signature in an earlier turn",
			bad: req(sonnet45, budget, user(text("a")), assistant(m{"type": "thinking", "thinking": "x", "signature": "EqQBCkYIBx"}, text("ok")),
				user(text("b")), assistant(good, text("ok")), user(text("c"))),
			ok: req(sonnet45, budget, user(text("a")), assistant(think(sonnet45, "x"), text("ok")),
				user(text("b")), assistant(good, text("ok")), user(text("c"))),
			want: "messages.1.content.0: Invalid `signature` in `thinking` block"},
		{name: "A4 another model's block on an older model",
			bad: req(sonnet45, budget, user(text("a")), assistant(think("claude-opus-4-1", "x"), text("ok")),
				user(text("b")), assistant(good, text("ok")), user(text("c"))),
			ok: req("claude-sonnet-5-5", nil, user(text("a")), assistant(think("claude-opus-4-1", "x"), text("ok")),
				user(text("b")), assistant(think("claude-sonnet-5-5", "y"), text("ok")), user(text("c"))),
			want: "messages.1.content.0: Invalid `signature` in `thinking` block"},
		{name: "A6 thinking off, trailing assistant with thinking",
			bad:  req(sonnet45, m{"thinking": m{"type": "disabled"}}, user(text("go")), assistant(good, text("Partial"))),
			ok:   req(sonnet45, budget, user(text("go")), assistant(good, text("Partial"))),
			want: "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."},
		{name: "A7 assistant message ending in thinking",
			bad:  req(sonnet45, budget, user(text("go")), assistant(good), user(text("next"))),
			ok:   req(sonnet45, budget, user(text("go")), assistant(good, text("stub")), user(text("next"))),
			want: "messages.1: The final block in an assistant message cannot be `thinking`."},
		{name: "A8 manual thinking on Opus 5.5",
			bad:  req("claude-opus-5-5", budget, user(text("go"))),
			ok:   req("claude-opus-5-5", m{"thinking": m{"type": "adaptive"}}, user(text("go"))),
			want: `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`},
		{name: "A8 thinking disabled on Fable 5.1",
			bad:  req("claude-fable-5-1", m{"thinking": m{"type": "disabled"}}, user(text("go"))),
			ok:   req("claude-fable-5-1", nil, user(text("go"))),
			want: `"thinking.type.disabled" is not supported for this model. Thinking defaults to adaptive mode when not specified; use "thinking.type.enabled" with "budget_tokens" for extended thinking.`},
		{name: "A8 adaptive on an older model",
			bad:  req("claude-sonnet-4-5-20250929", m{"thinking": m{"type": "adaptive"}}, user(text("go"))),
			ok:   req("claude-sonnet-4-5-20250929", budget, user(text("go"))),
			want: "adaptive thinking is not supported on this model"},
		{name: "A9 forced tool with manual thinking",
			bad:  req(sonnet45, with(budget, m{"tool_choice": m{"type": "any"}}), user(text("go"))),
			ok:   req(sonnet45, with(budget, m{"tool_choice": m{"type": "auto"}}), user(text("go"))),
			want: "Thinking may not be enabled when tool_choice forces tool use."},
		{name: "A9 forced tool on Sonnet 5.5, even without thinking",
			bad:  req("claude-sonnet-5-5", m{"tool_choice": m{"type": "tool", "name": "bash"}}, user(text("go"))),
			ok:   req("claude-sonnet-5-5", m{"tool_choice": m{"type": "auto"}}, user(text("go"))),
			want: `tool_choice: type "tool" and "any" are not supported for this model.`},
		{name: "A10 temperature with thinking",
			bad:  req(sonnet45, with(budget, m{"temperature": 0.2}), user(text("go"))),
			ok:   req(sonnet45, with(budget, m{"temperature": 1}), user(text("go"))),
			want: "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode"},
		{name: "A10 top_k with thinking",
			bad:  req(sonnet45, with(budget, m{"top_k": 40}), user(text("go"))),
			ok:   req(sonnet45, m{"top_k": 40}, user(text("go"))),
			want: "`top_k` must be unset when thinking is enabled."},
		{name: "A10 top_p below 0.95 with thinking",
			bad:  req(sonnet45, with(budget, m{"top_p": 0.5}), user(text("go"))),
			ok:   req(sonnet45, with(budget, m{"top_p": 0.95}), user(text("go"))),
			want: "`top_p` must be greater than or equal to 0.95"},
		{name: "A10 budget below 1024",
			bad:  req(sonnet45, m{"thinking": m{"type": "enabled", "budget_tokens": 512}}, user(text("go"))),
			ok:   req(sonnet45, m{"thinking": m{"type": "enabled", "budget_tokens": 1024}}, user(text("go"))),
			want: "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
		{name: "A10 budget not below max_tokens (allowed with interleaved thinking)",
			beta: betaInterleaved,
			bad:  req(sonnet45, m{"thinking": m{"type": "enabled", "budget_tokens": 4096}}, user(text("go"))),
			ok:   req(sonnet45, m{"thinking": m{"type": "enabled", "budget_tokens": 4095}}, user(text("go"))),
			want: "`max_tokens` must be greater than `thinking.budget_tokens`."},
		{name: "A11 clear_thinking with thinking off",
			bad:  req(sonnet45, m{"context_management": m{"edits": []m{{"type": "clear_thinking_20251015"}}}}, user(text("go"))),
			ok:   req(sonnet45, with(budget, m{"context_management": m{"edits": []m{{"type": "clear_thinking_20251015"}}}}), user(text("go"))),
			want: "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive"},
		{name: "A12 tool_use without its result",
			bad:  req(sonnet45, nil, user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"))),
			ok:   req(sonnet45, nil, user(text("go")), assistant(use("t1"), use("t2")), user(result("t1"), result("t2"))),
			want: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{name: "A12 tool_result without its call",
			bad:  req(sonnet45, nil, user(text("go")), assistant(text("Summary of the work so far.")), user(result("t1"))),
			ok:   req(sonnet45, nil, user(text("go")), assistant(text("Summary of the work so far.")), user(text("ls gave a.go"))),
			want: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{name: "blank text block",
			bad:  req(sonnet45, nil, user(text("go"), text("  \n"))),
			ok:   req(sonnet45, nil, user(text("go"))),
			want: "messages: text content blocks must contain non-whitespace text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t)
			if tt.preserved {
				srv.PreservedThinking()
			}
			st, body := post(t, srv, "/v1/messages", tt.bad, nil)
			if st != http.StatusBadRequest || !strings.Contains(body, jsonEscape(tt.want)) {
				t.Errorf("breaking request: %d %s\nwant 400 with %q", st, body, tt.want)
			}
			if !strings.Contains(body, `"type":"invalid_request_error"`) && st == http.StatusBadRequest {
				t.Errorf("error type: %s", body)
			}
			if tt.beta != "" {
				if st, body := post(t, srv, "/v1/messages", tt.bad, map[string]string{"anthropic-beta": tt.beta}); st != http.StatusOK {
					t.Errorf("with beta %s: %d %s", tt.beta, st, body)
				}
			}
			if st, body := post(t, srv, "/v1/messages", tt.ok, nil); st != http.StatusOK {
				t.Errorf("valid request refused: %d %s", st, body)
			}
		})
	}
}

// jsonEscape is s as it appears inside a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
