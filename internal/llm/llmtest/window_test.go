package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// anthropicReply decodes a JSON Messages reply: its thinking block and
// its usage.
func anthropicReply(t *testing.T, body string) (thinking m, u llm.Usage) {
	t.Helper()
	var r struct {
		Content []m `json:"content"`
		Usage   struct {
			Input      int `json:"input_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for _, c := range r.Content {
		if c["type"] == "thinking" {
			thinking = c
		}
	}
	return thinking, llm.Usage{Input: r.Usage.Input, CacheRead: r.Usage.CacheRead, CacheWrite: r.Usage.CacheWrite}
}

// A5: an edit before a preserved thinking block invalidates it and every
// later block; blocks before the edit stay valid.
func TestPrefixInvalidatesLaterBlocks(t *testing.T) {
	srv := NewServer(t)
	srv.SetModes(AnthropicPreservedThinking) // as cmd/fakellm -modes does
	const model = "claude-sonnet-5-5"
	ask := func(msgs ...m) m {
		srv.Enqueue(Reply{JSON: true, Thinking: "thought", Text: "answer"})
		st, body := post(t, srv, "/v1/messages", req(model, nil, msgs...), nil)
		if st != http.StatusOK {
			t.Fatalf("%d %s", st, body)
		}
		th, _ := anthropicReply(t, body)
		if th == nil {
			t.Fatalf("no thinking block in %s", body)
		}
		return th
	}
	th1 := ask(user(text("a")))
	th2 := ask(user(text("a")), assistant(th1, text("answer")), user(text("b")))
	conv := func(first, second string) []m {
		return []m{user(text(first)), assistant(th1, text("answer")), user(text(second)), assistant(th2, text("answer")), user(text("c"))}
	}
	drop := m{"thinking": m{"type": "adaptive", "block_binding": m{"prefix_mismatch_behavior": "drop_block"}}}
	beta := map[string]string{"anthropic-beta": betaThinkingBinding}
	tests := []struct {
		name          string
		first, second string
		failed        []string
	}{
		{"unchanged", "a", "b", nil},
		{"edit before both blocks", "A", "b", []string{"messages.1.content.0", "messages.3.content.0"}},
		{"edit between them", "a", "B", []string{"messages.3.content.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, body := post(t, srv, "/v1/messages", req(model, nil, conv(tt.first, tt.second)...), nil)
			if tt.failed == nil {
				if st != http.StatusOK {
					t.Fatalf("unchanged history refused: %d %s", st, body)
				}
				return
			}
			want := PrefixMismatchMessage(tt.failed[0], "thinking")
			if st != http.StatusBadRequest || !strings.Contains(body, jsonEscape(want)) {
				t.Errorf("error mode: %d %s\nwant %q", st, body, want)
			}
			st, body = post(t, srv, "/v1/messages", req(model, drop, conv(tt.first, tt.second)...), beta)
			reqs := srv.Requests()
			got := reqs[len(reqs)-1].PrefixFailures
			if st != http.StatusOK || strings.Join(got, ",") != strings.Join(tt.failed, ",") {
				t.Errorf("drop_block: %d, failures %v, want %v", st, got, tt.failed)
			}
			for _, p := range tt.failed {
				if !strings.Contains(body, `"path":"`+p+`"`) {
					t.Errorf("input_transformations lacks %s: %s", p, body)
				}
			}
		})
	}
}

// Usage tells the prompt's real size: input + cache read + cache write is
// the counted prompt, and a request that repeats an earlier one's prefix
// up to a breakpoint reads it back.
func TestUsageIsThePrompt(t *testing.T) {
	srv := NewServer(t)
	// Blocks as the adapter writes them: cache_control last.
	marked := func(s string) json.RawMessage {
		return json.RawMessage(`{"type":"text","text":"` + s + `","cache_control":{"type":"ephemeral"}}`)
	}
	long := strings.Repeat("context ", 2000)
	first := req("claude-sonnet-4-5", nil, m{"role": "user", "content": []any{marked(long)}})
	second := req("claude-sonnet-4-5", nil, m{"role": "user", "content": []any{json.RawMessage(`{"type":"text","text":"` + long + `"}`)}},
		assistant(text("ok")), m{"role": "user", "content": []any{marked("more")}})
	srv.Handle(func(Request) Reply { return Reply{JSON: true, Text: "ok"} })
	var us []llm.Usage
	for _, b := range [][]byte{first, second} {
		st, body := post(t, srv, "/v1/messages", b, nil)
		if st != http.StatusOK {
			t.Fatalf("%d %s", st, body)
		}
		_, u := anthropicReply(t, body)
		us = append(us, u)
	}
	for i, r := range srv.Requests() {
		if got := us[i].Input + us[i].CacheRead + us[i].CacheWrite; got != r.Tokens || r.Tokens == 0 {
			t.Errorf("request %d: usage %+v sums to %d, the server counted %d", i, us[i], got, r.Tokens)
		}
	}
	if us[0].CacheWrite == 0 || us[0].CacheRead != 0 {
		t.Errorf("first request: %+v, want a cache write and no read", us[0])
	}
	if us[1].CacheRead < us[0].CacheWrite*9/10 {
		t.Errorf("second request: %+v, want the first one's prefix (%d) read back", us[1], us[0].CacheWrite)
	}
}

// The window is enforced with each server's own overflow error, which
// harness reads the sizes from; without ContextLimit it is the model's
// window from the catalogue.
func TestWindowEnforced(t *testing.T) {
	t.Run("catalogue window", func(t *testing.T) {
		srv := NewServer(t)
		big := oreq("gpt-4o", nil, ouser(strings.Repeat("word ", 80000)))
		st, body := post(t, srv, "/v1/chat/completions", big, nil)
		if st != http.StatusBadRequest || !strings.Contains(body, "maximum context length is 128000 tokens") {
			t.Errorf("over gpt-4o's window: %d %s", st, body)
		}
		if st, body := post(t, srv, "/v1/chat/completions", oreq("gpt-4o", nil, ouser("hi")), nil); st != http.StatusOK {
			t.Errorf("small prompt: %d %s", st, body)
		}
	})
	t.Run("DeepSeek counts max_tokens in", func(t *testing.T) {
		srv := NewServer(t)
		srv.SetModes(DeepSeekThinking)
		body := oreq("deepseek-v4-pro", nil, ouser(strings.Repeat("word ", 2000)))
		n := CountTokens(body)
		srv.ContextLimit(n+500, nil) // the prompt fits, prompt + 1000 does not
		st, got := post(t, srv, "/v1/chat/completions", body, nil)
		if st != http.StatusBadRequest || !strings.Contains(got, "in the messages, 1000 in the completion") {
			t.Fatalf("%d %s", st, got)
		}
		var w struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(got), &w)
		p, l := llm.ContextLimit(&llm.Error{Kind: llm.ErrContextTooLong, Message: w.Error.Message})
		if p != n || l != n-500 {
			t.Errorf("harness reads prompt %d limit %d, want %d and %d", p, l, n, n-500)
		}
	})
	t.Run("OpenRouter counts max_tokens in", func(t *testing.T) {
		srv := NewServer(t)
		srv.SetModes(OpenRouterReasoning)
		body := oreq("anthropic/claude-sonnet-4.5", nil, ouser(strings.Repeat("word ", 2000)))
		n := CountTokens(body)
		srv.ContextLimit(n+500, nil) // the prompt fits, prompt + 1000 does not
		st, got := post(t, srv, "/v1/chat/completions", body, nil)
		want := fmt.Sprintf("However, you requested about %d tokens (%d of text input, 1000 in the output)", n+1000, n)
		if st != http.StatusBadRequest || !strings.Contains(got, want) {
			t.Fatalf("%d %s\nwant %s", st, got, want)
		}
		var w struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(got), &w)
		if p, l := llm.ContextLimit(&llm.Error{Kind: llm.ErrContextTooLong, Message: w.Error.Message}); p != n || l != n-500 {
			t.Errorf("harness reads prompt %d limit %d, want %d and %d", p, l, n, n-500)
		}
	})
	t.Run("Anthropic counts max_tokens in with thinking on", func(t *testing.T) {
		// The prompt fits, prompt + max_tokens (4096) does not: a
		// thinking request is refused with the API's own words, one
		// without thinking is served.
		srv := NewServer(t)
		on := req(sonnet45, budget, user(text(strings.Repeat("word ", 2000))))
		off := req(sonnet45, nil, user(text(strings.Repeat("word ", 2000))))
		n := CountTokens(on)
		srv.ContextLimit(n+1000, nil)
		st, got := post(t, srv, "/v1/messages", on, nil)
		want := fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + 4096 > %d, decrease input length or `max_tokens` and try again", n, n+1000)
		if st != http.StatusBadRequest || !strings.Contains(got, `"type":"invalid_request_error"`) || !strings.Contains(got, want) {
			t.Fatalf("thinking request, prompt + max_tokens over the window: %d %s\nwant %s", st, got, want)
		}
		if rs := srv.Requests(); rs[len(rs)-1].Rejected == "" {
			t.Error("the refusal is not listed in Rejected")
		}
		var w struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(got), &w)
		if p, l := llm.ContextLimit(&llm.Error{Kind: llm.ErrContextTooLong, Message: w.Error.Message}); p != n || l != n+1000-4096 {
			t.Errorf("harness reads prompt %d limit %d, want %d and %d", p, l, n, n+1000-4096)
		}
		if st, got := post(t, srv, "/v1/messages", off, nil); st != http.StatusOK {
			t.Errorf("the same prompt without thinking: %d %s", st, got)
		}
		srv.ContextLimit(n+4096, nil) // exactly fits
		if st, got := post(t, srv, "/v1/messages", on, nil); st != http.StatusOK {
			t.Errorf("prompt + max_tokens equal to the window: %d %s", st, got)
		}
	})
	t.Run("Anthropic", func(t *testing.T) {
		srv := NewServer(t)
		srv.ContextLimit(50, nil)
		st, got := post(t, srv, "/v1/messages", req("claude-sonnet-5-5", nil, user(text(strings.Repeat("word ", 100)))), nil)
		if st != http.StatusBadRequest || !strings.Contains(got, "tokens > 50 maximum") {
			t.Errorf("%d %s", st, got)
		}
	})
}
