package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

func conversation() *llm.Request {
	return &llm.Request{
		Model:  "gpt-test",
		System: "You are harness.",
		Tools: []llm.Tool{
			{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object"}`)},
			{Name: "read_file", Description: "Read a file."},
		},
		Messages: []llm.Message{
			llm.Text(llm.RoleUser, "fix <it> & test"),
			{Role: llm.RoleAssistant, Blocks: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "plan"},
				{Type: llm.BlockToolUse, ID: "c1", Name: "bash", Input: json.RawMessage(`{"cmd": "ls"}`)},
				{Type: llm.BlockToolUse, ID: "c2", Name: "read_file", Input: json.RawMessage(`"{\"path\": \"a.go"`)},
			}},
			{Role: llm.RoleUser, Blocks: []llm.Block{
				{Type: llm.BlockToolResult, ToolUseID: "c1", Content: "a.go"},
				{Type: llm.BlockToolResult, ToolUseID: "c2", Content: "invalid arguments", IsError: true},
				{Type: llm.BlockText, Text: "also check b.go"},
			}},
			{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockText, Text: "Done."}}},
			llm.Text(llm.RoleUser, "thanks"),
		},
		Reminder:  "Now: Monday",
		MaxTokens: 500,
		SessionID: "sess-1",
	}
}

func TestMessageMapping(t *testing.T) {
	body, err := openai.New(openai.Config{BaseURL: "http://localhost:8080"}).MarshalRequest(conversation())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gpt-test","max_tokens":500,"stream":true,"stream_options":{"include_usage":true},"prompt_cache_key":"sess-1",` +
		`"tools":[{"type":"function","function":{"name":"bash","description":"Run a command.","parameters":{"type":"object"}}},` +
		`{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{}}}}],` +
		`"messages":[{"role":"system","content":"You are harness."},` +
		`{"role":"user","content":"fix <it> & test"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"cmd\": \"ls\"}"}},` +
		`{"id":"c2","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.go"}}]},` +
		`{"role":"tool","content":"a.go","tool_call_id":"c1"},` +
		`{"role":"tool","content":"invalid arguments","tool_call_id":"c2"},` +
		`{"role":"user","content":"also check b.go"},` +
		`{"role":"assistant","content":"Done."},` +
		`{"role":"user","content":"thanks\n\nNow: Monday"}]}`
	if string(body) != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
}

func TestMaxTokensField(t *testing.T) {
	tests := []struct{ base, want string }{
		{"", `"max_completion_tokens":500`},
		{"https://api.openai.com/v1", `"max_completion_tokens":500`},
		{"http://localhost:11434/v1", `"max_tokens":500`},
		{"https://openrouter.ai/api/v1", `"max_tokens":500`},
	}
	for _, tt := range tests {
		body, _ := openai.New(openai.Config{BaseURL: tt.base}).MarshalRequest(conversation())
		if !strings.Contains(string(body), tt.want) {
			t.Errorf("base %q: body lacks %s", tt.base, tt.want)
		}
	}
	req := conversation()
	req.MaxTokens, req.SessionID = 0, ""
	body, _ := openai.New(openai.Config{}).MarshalRequest(req)
	if strings.Contains(string(body), "max_") || strings.Contains(string(body), "prompt_cache_key") {
		t.Errorf("unset fields sent: %s", body)
	}
}

// TestRequestPrefixStable: without its reminder, the body for a
// conversation is a byte prefix of the body for any extension of it (up to
// the closing "]}"), so prompt caches keep their prefix.
func TestRequestPrefixStable(t *testing.T) {
	p := openai.New(openai.Config{})
	long := conversation()
	a, _ := p.MarshalRequest(long)
	b, _ := p.MarshalRequest(long)
	if !bytes.Equal(a, b) {
		t.Fatal("same request, different bytes")
	}
	for n := 1; n < len(long.Messages); n++ {
		short := *long
		short.Messages = long.Messages[:n]
		sb, _ := p.MarshalRequest(&short)
		// The reminder is a message of its own after a tool or assistant
		// message, and joins the last user message otherwise (roles must
		// alternate for many templates): cut it either way.
		s := string(sb)
		if i := strings.LastIndex(s, `,{"role":"user","content":"Now: Monday"}]}`); i >= 0 {
			s = s[:i]
		} else if i := strings.LastIndex(s, `\n\nNow: Monday"}]}`); i >= 0 {
			s = s[:i]
		} else {
			t.Fatalf("reminder is not at the end: %s", sb)
		}
		if !strings.HasPrefix(string(a), s) {
			t.Errorf("%d messages: not a prefix\n%s\n%s", n, s, a)
		}
	}
}

// Two user messages in a row (a prompt after an interrupted turn, or the
// reminder after a prompt) go out as one: many chat templates reject roles
// that do not alternate.
func TestUserMessagesAlternate(t *testing.T) {
	req := &llm.Request{Model: "m", Messages: []llm.Message{
		llm.Text(llm.RoleUser, "first prompt"),
		llm.Text(llm.RoleUser, "second prompt"),
	}, Reminder: "<context>now</context>"}
	body, _ := openai.New(openai.Config{}).MarshalRequest(req)
	want := `"messages":[{"role":"user","content":"first prompt\n\nsecond prompt\n\n<context>now</context>"}]}`
	if !strings.HasSuffix(string(body), want) {
		t.Errorf("body %s\nwant suffix %s", body, want)
	}
}

func TestBaseURLAndAuth(t *testing.T) {
	srv := llmtest.NewServer(t)
	for _, tc := range []struct{ base, key string }{{srv.URL, ""}, {srv.URL + "/", "sk-x"}, {srv.URL + "/v1", "sk-y"}} {
		p := openai.New(openai.Config{BaseURL: tc.base, APIKey: tc.key})
		if _, err := p.Stream(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		r := reqs[len(reqs)-1]
		auth := r.Header.Get("Authorization")
		if r.Path != "/v1/chat/completions" || (tc.key == "" && auth != "") || (tc.key != "" && auth != "Bearer "+tc.key) {
			t.Errorf("base %q: path %s, Authorization %q", tc.base, r.Path, auth)
		}
	}
}

// serveStream answers every request with the given SSE body.
func serveStream(t *testing.T, body string) *openai.Provider {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(hs.Close)
	return openai.New(openai.Config{BaseURL: hs.URL})
}

func TestStreamQuirks(t *testing.T) {
	tests := []struct {
		name     string
		stream   string
		text     string
		thinking string
		calls    string // name(args) joined by " "
		usage    llm.Usage
		stop     llm.StopReason
	}{
		{"vllm reasoning, extra fields, keep-alives, split tool calls by index",
			": keep-alive\n\n" +
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning":"think"},"logprobs":null}],"x_extra":{"a":1}}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":"{\"cm"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"read_file","arguments":""}}]}}]}` + "\n\n" +
				": OPENROUTER PROCESSING\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"d\":\"ls\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"x\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":60}}}` + "\n\n" +
				"data: [DONE]\n\n",
			"", "think", `bash({"cmd":"ls"}) read_file({"path":"x"})`, llm.Usage{Input: 40, CacheRead: 60, Output: 9}, llm.StopToolUse},
		{"deepseek cache hits, no [DONE]",
			`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":2,"prompt_cache_hit_tokens":48,"prompt_cache_miss_tokens":2}}` + "\n\n",
			"hi", "", "", llm.Usage{Input: 2, CacheRead: 48, Output: 2}, llm.StopEnd},
		{"no usage at all, length",
			`data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n",
			"ab", "", "", llm.Usage{}, llm.StopMaxTokens},
		{"ollama whole tool calls without index, finish stop",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x","function":{"name":"bash","arguments":"{\"cmd\":\"a\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"y","function":{"name":"bash","arguments":"{}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n",
			"", "", `bash({"cmd":"a"}) bash({})`, llm.Usage{}, llm.StopToolUse},
		{"llama.cpp timings only",
			`data: {"choices":[{"index":0,"delta":{"reasoning_content":"r","content":"t"},"finish_reason":"stop"}],"timings":{"cache_n":30,"prompt_n":5,"predicted_n":7}}` + "\n\ndata: [DONE]",
			"t", "r", "", llm.Usage{Input: 5, CacheRead: 30, Output: 7}, llm.StopEnd},
		{"invalid tool JSON kept as a string, no id",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"bash","arguments":"{\"cmd\":"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			"", "", `bash("{\"cmd\":")`, llm.Usage{}, llm.StopToolUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			var evCalls int
			r, err := serveStream(t, tt.stream).Stream(context.Background(), conversation(), func(e llm.Event) {
				if e.Type == llm.EventToolCall {
					evCalls++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var thinking string
			for _, b := range r.Message.Blocks {
				switch b.Type {
				case llm.BlockToolUse:
					if b.ID == "" {
						t.Error("tool call without id")
					}
					calls = append(calls, b.Name+"("+string(b.Input)+")")
				case llm.BlockThinking:
					thinking += b.Thinking
				}
			}
			if r.Message.PlainText() != tt.text || thinking != tt.thinking || strings.Join(calls, " ") != tt.calls {
				t.Errorf("text %q thinking %q calls %q; want %q %q %q", r.Message.PlainText(), thinking, calls, tt.text, tt.thinking, tt.calls)
			}
			if evCalls != len(calls) {
				t.Errorf("%d tool call events for %d calls", evCalls, len(calls))
			}
			if r.Usage != tt.usage || r.StopReason != tt.stop {
				t.Errorf("usage %+v stop %q; want %+v %q", r.Usage, r.StopReason, tt.usage, tt.stop)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	const key = "sk-proj-SECRETKEY"
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		ctype      string
		body       string
		kind       llm.ErrorKind
		retryAfter time.Duration
		msg        string
	}{
		{"auth", 401, nil, "application/json", `{"error":{"message":"Incorrect API key provided: ` + key + `","type":"invalid_request_error","code":"invalid_api_key"}}`, llm.ErrAuth, 0, "Incorrect API key provided: [redacted]"},
		{"rate limit", 429, map[string]string{"retry-after-ms": "2500"}, "application/json", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, llm.ErrRateLimit, 2500 * time.Millisecond, "Rate limit reached"},
		{"quota is not retried", 429, nil, "application/json", `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, llm.ErrBadRequest, 0, "quota"},
		{"openai context", 400, nil, "application/json", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.ErrContextTooLong, 0, "128000"},
		{"llama.cpp context", 400, nil, "application/json", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, llm.ErrContextTooLong, 0, "available context size"},
		{"vllm context", 400, nil, "application/json", `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens","type":"BadRequestError","param":null,"code":400}`, llm.ErrContextTooLong, 0, "8192"},
		{"bad request", 400, nil, "application/json", `{"error":{"message":"Unrecognized request argument supplied: foo","type":"invalid_request_error"}}`, llm.ErrBadRequest, 0, "Unrecognized request argument"},
		{"502", 502, nil, "text/plain", `bad gateway`, llm.ErrOverloaded, 0, "bad gateway"},
		// A web page is not the API: said at once, with what to check.
		{"502 web page", 502, nil, "text/html", `<html><head><title>502 Bad Gateway</title></head></html>`, llm.ErrBadRequest, 0, "answered a web page (502 Bad Gateway), which does not look like the API: check the URL"},
		{"200 web page", 200, nil, "text/html; charset=utf-8", `<!doctype html><title>Welcome to nginx!</title>`, llm.ErrBadRequest, 0, "answered a web page (Welcome to nginx!), which does not look like the API"},
		{"503 page from a busy proxy", 503, nil, "text/html", `<html>busy</html>`, llm.ErrOverloaded, 0, "busy"},
		{"error chunk mid-stream", 200, nil, "text/event-stream",
			`data: {"choices":[{"index":0,"delta":{"content":"par"}}]}` + "\n\n" + `data: {"error":{"message":"Provider returned error","code":502}}` + "\n\n",
			llm.ErrOverloaded, 0, "Provider returned error"},
		{"cut before finish", 200, nil, "text/event-stream", `data: {"choices":[{"index":0,"delta":{"content":"par"}}]}` + "\n\n", llm.ErrStreamCut, 0, "finish"},
		{"[DONE] with nothing", 200, nil, "text/event-stream", "data: [DONE]\n\n", llm.ErrStreamCut, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer hs.Close()
			reply, err := openai.New(openai.Config{BaseURL: hs.URL, APIKey: key}).Stream(context.Background(), conversation(), nil)
			var e *llm.Error
			if !errors.As(err, &e) || reply != nil {
				t.Fatalf("reply %v err %v", reply, err)
			}
			if e.Kind != tt.kind || e.RetryAfter != tt.retryAfter {
				t.Errorf("kind %v retry-after %v; want %v %v (%v)", e.Kind, e.RetryAfter, tt.kind, tt.retryAfter, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%q lacks %q", err.Error(), tt.msg)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}
