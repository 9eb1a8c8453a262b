package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// loop runs a two-step tool loop through p the way the agent does: the
// first reply calls a tool, its result goes back with the reply stored,
// and the second request must be accepted. It returns both replies and the
// notices the adapter sent.
func loop(t *testing.T, p llm.Provider, model string) (first, second *llm.Reply, notices []string, err error) {
	t.Helper()
	req := &llm.Request{Model: model, System: "You are harness.", SessionID: "sess-1", MaxTokens: 1000,
		Tools:    []llm.Tool{{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{llm.Text(llm.RoleUser, "read a.go")}}
	on := func(e llm.Event) {
		if e.Type == llm.EventNotice {
			notices = append(notices, e.Text)
		}
	}
	first, err = p.Stream(context.Background(), req, on)
	if err != nil {
		return nil, nil, notices, err
	}
	var results []llm.Block
	for _, c := range first.Message.ToolCalls() {
		results = append(results, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: "package a"})
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleUser, Blocks: results})
	second, err = p.Stream(context.Background(), req, on)
	return first, second, notices, err
}

var toolReply = llmtest.Reply{Thinking: "I should read it.", ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: `{"path":"a.go"}`}},
	Usage: llm.Usage{Input: 900, CacheRead: 100, Output: 20}}
var doneReply = llmtest.Reply{Text: "It is package a.", Usage: llm.Usage{Input: 100, CacheRead: 900, Output: 5}}

// TestServerBehaviours runs a tool loop against each server behaviour the
// fake emulates, through the real adapter: each must work, within the
// requests said, and say what it learned once.
func TestServerBehaviours(t *testing.T) {
	tests := []struct {
		name     string
		modes    []llmtest.Mode
		model    string
		profile  string
		requests int    // HTTP requests for the two steps
		notices  int    // notices sent
		lacks    string // the last body must not contain this
		has      string // and must contain this
	}{
		// A server known to nothing, with a model known to nothing, that
		// rejects prompt_cache_key: the first call learns, the second
		// goes straight through.
		{"unknown server rejects prompt_cache_key (Groq's body)", []llmtest.Mode{llmtest.GroqRejectsUnknown}, "mystery-model-7b", "", 3, 1, `"prompt_cache_key"`, `"stream_options"`},
		{"unknown server rejects prompt_cache_key (Gemini's body)", []llmtest.Mode{llmtest.GeminiRejectsUnknown}, "mystery-model-7b", "", 3, 1, `"prompt_cache_key"`, ``},
		{"Gemini profile never sends it", []llmtest.Mode{llmtest.GeminiRejectsUnknown}, "gemini-2.5-flash", "gemini", 2, 0, `"prompt_cache_key"`, ``},
		{"Mistral rejects stream_options (422)", []llmtest.Mode{llmtest.MistralRejectsExtra}, "mystery-model-7b", "", 3, 1, `"stream_options"`, `"max_tokens"`},
		{"Mistral profile sends neither", []llmtest.Mode{llmtest.MistralRejectsExtra}, "devstral-2512", "mistral", 2, 0, `"stream_options"`, ``},
		{"gateway deployment rejects max_tokens", []llmtest.Mode{llmtest.RejectsMaxTokens}, "my-deployment", "", 3, 1, `"max_tokens"`, `"max_completion_tokens":1000`},
		{"gpt-5 behind a gateway gets max_completion_tokens first", []llmtest.Mode{llmtest.RejectsMaxTokens}, "gpt-5-mini", "", 2, 0, `"max_tokens"`, `"max_completion_tokens":1000`},
		{"DeepSeek thinking: reasoning_content passed back", []llmtest.Mode{llmtest.DeepSeekThinking}, "deepseek-v4-pro", "", 2, 0, ``, `"reasoning_content":"I should read it."`},
		{"DeepSeek profile forced for an unknown name", []llmtest.Mode{llmtest.DeepSeekThinking}, "house-reasoner", "deepseek", 2, 0, ``, `"reasoning_content":"I should read it."`},
		{"Gemini thought signatures kept verbatim", []llmtest.Mode{llmtest.GeminiThoughtSignatures}, "gemini-3-pro-preview", "gemini", 2, 0, ``, `"extra_content":{"google":{"thought_signature":"CiQB`},
		{"Gemini thought signatures on an unknown host", []llmtest.Mode{llmtest.GeminiThoughtSignatures}, "gemini-3-flash-preview", "", 2, 0, ``, `"thought_signature"`},
		{"OpenRouter reasoning_details passed back", []llmtest.Mode{llmtest.OpenRouterReasoning}, "google/gemini-3-pro-preview", "openrouter", 2, 0, ``, `"reasoning_details":[{"format":"google-gemini-v1","index":0,"signature":"gAAAA-served-1"`},
		{"repeated tool names", []llmtest.Mode{llmtest.RepeatToolNames}, "qwen3-coder", "vllm", 2, 0, `read_fileread_file`, `"name":"read_file"`},
		{"object arguments", []llmtest.Mode{llmtest.ObjectArguments}, "llama3.1", "ollama", 2, 0, ``, `"arguments":"{\"path\":\"a.go\"}"`},
		// The fake enforces what it emulates: without the pass-back the
		// second request fails with the server's own words.
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.SetModes(tt.modes...)
			srv.Enqueue(toolReply, doneReply)
			p, err := openai.NewChecked(openai.Config{BaseURL: srv.URL, Profile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			first, second, notices, err := loop(t, p, tt.model)
			if err != nil {
				t.Fatalf("loop: %v", err)
			}
			calls := first.Message.ToolCalls()
			if len(calls) != 1 || calls[0].Name != "read_file" || string(calls[0].Input) != `{"path":"a.go"}` {
				t.Errorf("tool call = %+v", calls)
			}
			if second.Message.PlainText() != "It is package a." {
				t.Errorf("second reply = %q", second.Message.PlainText())
			}
			// Usage in each server's own fields (DeepSeek's
			// prompt_cache_hit_tokens included) comes out the same.
			if want := (llm.Usage{Input: 100, CacheRead: 900, Output: 5}); second.Usage != want {
				t.Errorf("usage %+v, want %+v", second.Usage, want)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.requests {
				t.Errorf("%d requests, want %d", len(reqs), tt.requests)
			}
			if len(notices) != tt.notices {
				t.Errorf("notices %q, want %d", notices, tt.notices)
			}
			last := string(reqs[len(reqs)-1].Body)
			if tt.lacks != "" && strings.Contains(last, tt.lacks) {
				t.Errorf("last body has %s:\n%s", tt.lacks, last)
			}
			if tt.has != "" && !strings.Contains(last, tt.has) {
				t.Errorf("last body lacks %s:\n%s", tt.has, last)
			}
			// Within the session the bytes of the shared prefix stay the
			// same: the second request extends the first one sent after
			// learning (less its closing "]}").
			if len(reqs) >= 2 {
				a := string(reqs[len(reqs)-2].Body)
				if i := strings.LastIndex(a, `,{"role":"user","content":"read a.go"}`); i < 0 || !strings.HasPrefix(last, a[:i]) {
					t.Errorf("prefix changed between steps:\n%s\n%s", a, last)
				}
			}
		})
	}
}

// The modes enforce what they emulate: a client that does not pass back
// what the server requires gets the server's own 400, as a bad request.
func TestServerBehavioursEnforced(t *testing.T) {
	tests := []struct {
		name    string
		mode    llmtest.Mode
		profile string
		model   string
		says    string
	}{
		{"DeepSeek without reasoning_content", llmtest.DeepSeekThinking, "groq", "deepseek-v4-pro", "The `reasoning_content` in the thinking mode must be passed back to the API."},
		{"Gemini without thought signatures", llmtest.GeminiThoughtSignatures, "groq", "gemini-3-pro-preview", "Function call is missing a thought_signature"},
		{"OpenRouter without reasoning_details", llmtest.OpenRouterReasoning, "groq", "google/gemini-3-pro-preview", "Provider returned error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.SetModes(tt.mode)
			srv.Enqueue(toolReply, doneReply)
			p, _ := openai.NewChecked(openai.Config{BaseURL: srv.URL, Profile: tt.profile})
			_, _, _, err := loop(t, p, tt.model)
			if llm.KindOf(err) != llm.ErrBadRequest || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v; want a bad request saying %q", err, tt.says)
			}
		})
	}
}

func TestUnknownProfile(t *testing.T) {
	if _, err := openai.NewChecked(openai.Config{Profile: "nonesuch"}); err == nil || !strings.Contains(err.Error(), "OPENAI_PROFILE") {
		t.Errorf("err = %v", err)
	}
}

// Claude behind OpenRouter is cached only with cache_control markers; they
// go where the Anthropic adapter puts its breakpoints.
func TestOpenRouterClaudeCacheControl(t *testing.T) {
	for _, tt := range []struct {
		model  string
		marked bool
	}{{"anthropic/claude-sonnet-4.5", true}, {"openai/gpt-4o", false}} {
		srv := llmtest.NewServer(t)
		srv.SetModes(llmtest.OpenRouterCache)
		srv.Enqueue(toolReply, doneReply)
		p, _ := openai.NewChecked(openai.Config{BaseURL: srv.URL, Profile: "openrouter"})
		_, second, _, err := loop(t, p, tt.model)
		if err != nil {
			t.Fatal(err)
		}
		body := string(srv.Requests()[1].Body)
		has := strings.Contains(body, `"cache_control":{"type":"ephemeral"}`)
		if has != tt.marked || (second.Usage.CacheRead > 0) != tt.marked {
			t.Errorf("%s: markers %v, cache read %d; want markers %v\n%s", tt.model, has, second.Usage.CacheRead, tt.marked, body)
		}
		if tt.marked && !strings.Contains(body, `{"role":"system","content":[{"type":"text","text":"You are harness.","cache_control":{"type":"ephemeral"}}]}`) {
			t.Errorf("system prompt not marked: %s", body)
		}
		if tt.marked && !strings.Contains(body, `{"role":"tool","content":[{"type":"text","text":"package a","cache_control":{"type":"ephemeral"}}],"tool_call_id"`) {
			t.Errorf("rolling breakpoint not on the last tool result: %s", body)
		}
	}
}

// Replies of the kinds that need care downstream come out typed.
func TestReplyShapes(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		stop  llm.StopReason
		text  string
		calls int
	}{
		{"refusal", llmtest.Reply{Text: "I can't help with that.", StopReason: "refusal"}, llm.StopRefusal, "I can't help with that.", 0},
		{"cut in the middle of a tool call", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: `{"path":"a.go","content":"package a\nfunc`}}, StopReason: "max_tokens"}, llm.StopMaxTokens, "", 1},
		{"whitespace before a tool call is dropped", llmtest.Reply{Text: "\n\n", ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: `{}`}}}, llm.StopToolUse, "", 1},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			srv := llmtest.NewServer(t)
			r := tt.reply
			r.JSON = asJSON
			srv.Enqueue(r)
			reply, err := openai.New(openai.Config{BaseURL: srv.URL}).Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if reply.StopReason != tt.stop || reply.Message.PlainText() != tt.text || len(reply.Message.ToolCalls()) != tt.calls {
				t.Errorf("%s (json %v): stop %s, text %q, %d calls", tt.name, asJSON, reply.StopReason, reply.Message.PlainText(), len(reply.Message.ToolCalls()))
			}
			for _, b := range reply.Message.Blocks {
				if b.Blank() {
					t.Errorf("%s: a blank text block was kept", tt.name)
				}
			}
		}
	}
}

// Each server's own context-too-long answer is the typed error the context
// layers act on, and Cloudflare's 52x pages are retried.
func TestServerErrorBodies(t *testing.T) {
	for name, e := range llmtest.ErrorBodies {
		if strings.HasPrefix(name, "anthropic-") {
			continue // the Anthropic adapter's test
		}
		srv := llmtest.NewServer(t)
		r, _ := llmtest.ServerError(name)
		srv.Enqueue(r, llmtest.Reply{Text: "recovered"})
		var waits int
		p := llm.WithRetry(openai.New(openai.Config{BaseURL: srv.URL}), llm.RetryOptions{
			Sleep: func(ctx context.Context, d time.Duration) error { waits++; return nil }})
		reply, err := p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
		switch {
		case strings.HasSuffix(name, "-context"):
			if llm.KindOf(err) != llm.ErrContextTooLong || waits != 0 {
				t.Errorf("%s: err %v after %d waits; want context too long at once", name, err, waits)
			}
		case e.Status >= 520:
			if err != nil || reply.Message.PlainText() != "recovered" || waits != 1 {
				t.Errorf("%s: reply %v, err %v, %d waits; want one retry", name, reply, err, waits)
			}
		}
	}
}

func TestChooseProfile(t *testing.T) {
	tests := []struct {
		base, model, want string
		maxCompletion     bool
		cacheControl      bool
		reasoning         bool
	}{
		{"", "gpt-4o", "openai", true, false, false},
		{"https://api.openai.com/v1", "gpt-4.1", "openai", true, false, false},
		{"https://myorg.openai.azure.com/openai/v1", "gpt-5", "azure", true, false, false},
		{"https://myorg.openai.azure.com/openai/v1", "gpt-4o", "azure", false, false, false},
		{"https://generativelanguage.googleapis.com/v1beta/openai", "gemini-3-pro-preview", "gemini", false, false, false},
		{"https://api.groq.com/openai/v1", "openai/gpt-oss-120b", "groq", false, false, false},
		{"https://api.mistral.ai/v1", "mistral-large-latest", "mistral", false, false, false},
		{"https://api.deepseek.com", "deepseek-v4-pro", "deepseek", false, false, true},
		{"https://openrouter.ai/api/v1", "anthropic/claude-opus-4.7", "openrouter", false, true, false},
		{"https://openrouter.ai/api/v1", "openai/gpt-5", "openrouter", false, false, false},
		{"http://localhost:11434/v1", "qwen3-coder", "ollama", false, false, false},
		{"http://localhost:8080", "gpt-oss-20b", "generic", false, false, false},
		{"https://gateway.internal/v1", "o3-mini", "generic", true, false, false},
		{"https://gateway.internal/v1", "deepseek-reasoner", "generic", false, false, true},
	}
	for _, tt := range tests {
		p := openai.ChooseProfile(tt.base, tt.model)
		if p.Name != tt.want || p.MaxCompletionTokens != tt.maxCompletion || p.CacheControl != tt.cacheControl || p.ReasoningContent != tt.reasoning {
			t.Errorf("ChooseProfile(%q, %q) = %+v", tt.base, tt.model, p)
		}
	}
}

// Each server's own way of naming a field it rejects is understood; a 400
// about something else is not taken for one.
func TestLearnsFromEachServersWords(t *testing.T) {
	tests := []struct {
		name, body, field string
		status            int
	}{
		{"vLLM pydantic (python repr)", `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'prompt_cache_key'), 'msg': 'Extra inputs are not permitted', 'input': 'sess-1'}]","type":"BadRequestError","param":null,"code":400}`, "prompt_cache_key", 400},
		{"Azure unrecognized argument", `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`, "stream_options", 400},
		{"OpenAI unknown parameter", `{"error":{"message":"Unknown parameter: 'prompt_cache_key'.","type":"invalid_request_error","param":"prompt_cache_key","code":"unknown_parameter"}}`, "prompt_cache_key", 400},
		{"Mistral max_completion_tokens", `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","max_completion_tokens"],"msg":"Extra inputs are not permitted","input":32000}]},"type":"invalid_request_error","param":null,"code":null}`, "max_completion_tokens", 422},
		{"Groq limit is not an unknown field", `{"error":{"message":"max_completion_tokens must be less than or equal to 40960, the maximum value for max_completion_tokens is less than the context_window for this model","type":"invalid_request_error","param":"max_completion_tokens"}}`, "", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Reply{Status: tt.status, ErrorBody: tt.body}, llmtest.Reply{Text: "ok"})
			p, _ := openai.NewChecked(openai.Config{BaseURL: srv.URL, Profile: "openai"})
			var notices int
			_, err := p.Stream(context.Background(), &llm.Request{Model: "m", SessionID: "sess-1", MaxTokens: 100, Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}},
				func(e llm.Event) {
					if e.Type == llm.EventNotice {
						notices++
					}
				})
			if tt.field == "" {
				if llm.KindOf(err) != llm.ErrBadRequest || notices != 0 || len(srv.Requests()) != 1 {
					t.Fatalf("err %v, %d notices, %d requests; want the 400 as is", err, notices, len(srv.Requests()))
				}
				return
			}
			if err != nil || notices != 1 {
				t.Fatalf("err %v, %d notices", err, notices)
			}
			if body := string(srv.Requests()[1].Body); strings.Contains(body, `"`+tt.field+`"`) {
				t.Errorf("retry still sends %s: %s", tt.field, body)
			}
		})
	}
}
