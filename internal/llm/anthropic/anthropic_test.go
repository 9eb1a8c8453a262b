package anthropic_test

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
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

const marker = `,"cache_control":{"type":"ephemeral"}`

// conversation returns a request with n tool rounds, each with calls
// parallel tool calls, ending with the user's tool results.
func conversation(rounds, calls int) *llm.Request {
	req := &llm.Request{
		Model:  "claude-test",
		System: "You are harness.",
		Tools: []llm.Tool{
			{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object"}`)},
		},
		Messages:  []llm.Message{llm.Text(llm.RoleUser, "fix the <bug> & test")},
		MaxTokens: 1000,
	}
	for r := 0; r < rounds; r++ {
		a := llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "plan", Signature: fmt.Sprintf("sig%d", r)},
			{Type: llm.BlockText, Text: "Looking."},
		}}
		u := llm.Message{Role: llm.RoleUser}
		for c := 0; c < calls; c++ {
			id := fmt.Sprintf("t%d_%d", r, c)
			a.Blocks = append(a.Blocks, llm.Block{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: json.RawMessage(`{"cmd": "ls"}`)})
			u.Blocks = append(u.Blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: id, Content: "out"})
		}
		req.Messages = append(req.Messages, a, u)
	}
	return req
}

type wireBody struct {
	System []map[string]any `json:"system"`
	Tools  []map[string]any `json:"tools"`
	Msgs   []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
}

func decode(t *testing.T, body []byte) wireBody {
	t.Helper()
	var w wireBody
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return w
}

// marks lists where cache_control sits: "tool:N", "system", "msg:M/B".
func marks(w wireBody) []string {
	var out []string
	for i, t := range w.Tools {
		if t["cache_control"] != nil {
			out = append(out, fmt.Sprintf("tool:%d", i))
		}
	}
	for _, s := range w.System {
		if s["cache_control"] != nil {
			out = append(out, "system")
		}
	}
	for i, m := range w.Msgs {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("msg:%d/%d", i, j))
			}
		}
	}
	return out
}

func TestBreakpoints(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	tests := []struct {
		name     string
		req      *llm.Request
		want     []string
		reminder string // expected last block text of the last message
	}{
		{"first turn", conversation(0, 0), []string{"system", "msg:0/0"}, ""},
		{"short tool rounds", conversation(2, 3), []string{"system", "msg:3/4", "msg:4/2"}, ""},
		// Round 1's results (9) and round 2's assistant blocks (2+9) put 20
		// blocks between the two assistant ends: the earlier one, where the
		// previous request wrote its cache, gets a marker of its own.
		{"long parallel round", conversation(2, 9), []string{"system", "msg:1/10", "msg:3/10", "msg:4/8"}, ""},
		{"reminder after the breakpoint", func() *llm.Request { r := conversation(1, 1); r.Reminder = "Now: Monday"; return r }(),
			[]string{"system", "msg:1/2", "msg:2/0"}, "Now: Monday"},
		{"reminder after an assistant message gets its own user message", func() *llm.Request {
			r := conversation(0, 0)
			r.Messages = append(r.Messages, llm.Text(llm.RoleAssistant, "prefill"))
			r.Reminder = "Now: Tuesday"
			return r
		}(), []string{"system", "msg:1/0"}, "Now: Tuesday"},
		{"no tools no system", func() *llm.Request { r := conversation(3, 10); r.Tools, r.System = nil, ""; return r }(),
			[]string{"msg:3/11", "msg:5/11", "msg:6/9"}, ""},
		// The latest results will be stripped before the next request:
		// caching them buys nothing, so the rolling breakpoint stops at the
		// assistant message before them.
		{"volatile tail", func() *llm.Request { r := conversation(2, 3); r.Volatile = 1; return r }(),
			[]string{"system", "msg:1/4", "msg:3/4"}, ""},
		// An edit changed message 2 on (Stable 2): the cache of the
		// requests before it still holds messages 0–1, more than 20
		// blocks before the other markers, so a marker goes there.
		{"after an edit", func() *llm.Request { r := conversation(4, 1); r.Stable = 2; return r }(),
			[]string{"system", "msg:1/2", "msg:7/2", "msg:8/0"}, ""},
		{"tools without system", func() *llm.Request { r := conversation(1, 1); r.System = ""; return r }(),
			[]string{"tool:1", "msg:1/2", "msg:2/0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := p.MarshalRequest(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			w := decode(t, body)
			got := marks(w)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("breakpoints %v, want %v", got, tt.want)
			}
			if n := strings.Count(string(body), marker); n > 4 || n != len(tt.want) {
				t.Errorf("%d cache_control markers", n)
			}
			last := w.Msgs[len(w.Msgs)-1]
			if last.Role != "user" {
				t.Errorf("last message role %q", last.Role)
			}
			lb := last.Content[len(last.Content)-1]
			if tt.req.Volatile > 0 {
				if lb["cache_control"] != nil {
					t.Errorf("volatile last block %v carries a breakpoint", lb)
				}
			} else if tt.reminder != "" {
				if lb["text"] != tt.reminder || lb["cache_control"] != nil {
					t.Errorf("last block %v, want the uncached reminder %q", lb, tt.reminder)
				}
			} else if lb["cache_control"] == nil {
				t.Errorf("last stored block %v has no breakpoint", lb)
			}
		})
	}
}

func TestBreakpointsNeverMoreThanFour(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	for rounds := 0; rounds < 6; rounds++ {
		for calls := 0; calls < 25; calls += 4 {
			req := conversation(rounds, calls)
			req.Reminder = "r"
			body, err := p.MarshalRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(body), marker); n > 4 {
				t.Fatalf("%d rounds × %d calls: %d breakpoints", rounds, calls, n)
			}
		}
	}
}

func TestRequestBytes(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	a, _ := p.MarshalRequest(conversation(2, 2))
	b, _ := p.MarshalRequest(conversation(2, 2))
	if !bytes.Equal(a, b) {
		t.Fatal("same request, different bytes")
	}
	want := `{"model":"claude-test","max_tokens":1000,"stream":true,"system":[{"type":"text","text":"You are harness.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"bash","description":"Run a command.","input_schema":{"type":"object","properties":{"cmd":{"type":"string"}}}},` +
		`{"name":"read_file","description":"Read a file.","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"fix the <bug> & test"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"sig0"},{"type":"text","text":"Looking."},` +
		`{"type":"tool_use","id":"t0_0","name":"bash","input":{"cmd":"ls"}}`
	if !bytes.HasPrefix(a, []byte(want)) {
		t.Errorf("body starts\n%s\nwant\n%s", a[:min(len(a), len(want))], want)
	}
}

// TestRequestPrefixStable checks the cache-friendliness of the bytes: with
// the cache_control markers removed (they move with the conversation, by
// design), the body of a conversation is a byte prefix of the body of any
// longer conversation extending it, up to the closing "]}" of the messages.
// The reminder of the shorter request is not part of that prefix either.
func TestRequestPrefixStable(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	long := conversation(4, 6)
	for n := 1; n < len(long.Messages); n++ {
		short := *long
		short.Messages = long.Messages[:n]
		short.Reminder = "changes every turn"
		sb, _ := p.MarshalRequest(&short)
		lb, _ := p.MarshalRequest(long)
		s := strings.ReplaceAll(string(sb), marker, "")
		l := strings.ReplaceAll(string(lb), marker, "")
		i := strings.LastIndex(s, `,{"type":"text","text":"changes every turn"}`)
		if long.Messages[n-1].Role == llm.RoleAssistant {
			i = strings.LastIndex(s, `,{"role":"user","content":[{"type":"text","text":"changes every turn"}]}`)
		}
		if i < 0 {
			t.Fatalf("reminder not found in %s", s)
		}
		s = s[:i]
		if !strings.HasPrefix(l, s) {
			t.Fatalf("%d messages: body is not a prefix of the longer one\nshort %s\nlong  %s", n, s, l)
		}
	}
}

func TestThinkingSignatureAndInvalidInput(t *testing.T) {
	p := anthropic.New(anthropic.Config{})
	req := &llm.Request{Messages: []llm.Message{
		llm.Text(llm.RoleUser, "go"),
		{Role: llm.RoleAssistant, Blocks: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "hmm", Signature: "EqQBCkYIBxgCKkA+/=="},
			{Type: llm.BlockToolUse, ID: "a", Name: "bash", Input: json.RawMessage(`"{\"cmd\": \"ls"`)},
			{Type: llm.BlockToolUse, ID: "b", Name: "bash"},
		}},
		{Role: llm.RoleUser, Blocks: []llm.Block{
			{Type: llm.BlockToolResult, ToolUseID: "a", Content: "bad json", IsError: true},
			{Type: llm.BlockToolResult, ToolUseID: "b", Content: ""},
		}},
	}}
	body, err := p.MarshalRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"thinking","thinking":"hmm","signature":"EqQBCkYIBxgCKkA+/=="}`,
		`{"type":"tool_use","id":"a","name":"bash","input":{}}`,
		`{"type":"tool_use","id":"b","name":"bash","input":{},"cache_control":{"type":"ephemeral"}}`,
		`{"type":"tool_result","tool_use_id":"a","content":"bad json","is_error":true}`,
		`{"type":"tool_result","tool_use_id":"b","content":"","cache_control":{"type":"ephemeral"}}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %s\n%s", want, body)
		}
	}
}

func TestHeadersAndBaseURL(t *testing.T) {
	for _, base := range []string{"", "/", "/v1", "/v1/"} {
		srv := llmtest.NewServer(t)
		p := anthropic.New(anthropic.Config{BaseURL: srv.URL + base, APIKey: "sk-ant-secret"})
		if _, err := p.Stream(context.Background(), conversation(0, 0), nil); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != "sk-ant-secret" ||
			r.Header.Get("anthropic-version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
			t.Errorf("base %q: path %s headers %v", base, r.Path, r.Header)
		}
	}
}

// serve answers every request with status, headers and body.
func serve(t *testing.T, status int, header map[string]string, body string) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestErrors(t *testing.T) {
	const key = "sk-ant-api03-SECRET"
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       llm.ErrorKind
		retryAfter time.Duration // minimum
		msg        string
	}{
		{"auth", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`, llm.ErrAuth, 0, "invalid x-api-key [redacted]"},
		{"forbidden", 403, nil, `{"type":"error","error":{"type":"permission_error","message":"no"}}`, llm.ErrAuth, 0, "no"},
		{"rate limit seconds", 429, map[string]string{"retry-after": "12"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, llm.ErrRateLimit, 12 * time.Second, "slow down"},
		{"rate limit date", 429, map[string]string{"retry-after": date}, `{}`, llm.ErrRateLimit, 80 * time.Second, ""},
		{"rate limit ms", 429, map[string]string{"retry-after-ms": "1500"}, `{}`, llm.ErrRateLimit, 1500 * time.Millisecond, ""},
		{"overloaded 529", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, llm.ErrOverloaded, 0, "Overloaded"},
		{"server error", 500, nil, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, llm.ErrOverloaded, 0, "Internal server error"},
		{"gateway", 503, nil, `<html>bad gateway</html>`, llm.ErrOverloaded, 0, "<html>bad gateway</html>"},
		{"too long", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, llm.ErrContextTooLong, 0, "prompt is too long"},
		{"bad request", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`, llm.ErrBadRequest, 0, "max_tokens: must be positive"},
		{"overloaded mid-stream", 200, map[string]string{"Content-Type": "text/event-stream"},
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n" +
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			llm.ErrOverloaded, 0, "Overloaded"},
		{"eof before message_stop", 200, map[string]string{"Content-Type": "text/event-stream"},
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5}}}\n\n",
			llm.ErrStreamCut, 0, "message_stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serve(t, tt.status, tt.header, tt.body)
			p := anthropic.New(anthropic.Config{BaseURL: url, APIKey: key})
			var events []llm.Event
			reply, err := p.Stream(context.Background(), conversation(0, 0), func(e llm.Event) { events = append(events, e) })
			var e *llm.Error
			if !errors.As(err, &e) || reply != nil {
				t.Fatalf("reply %v, err %v; want an *llm.Error", reply, err)
			}
			if e.Kind != tt.kind {
				t.Errorf("kind %v, want %v (%v)", e.Kind, tt.kind, err)
			}
			if e.RetryAfter < tt.retryAfter || (tt.retryAfter == 0 && e.RetryAfter != 0) || e.RetryAfter > tt.retryAfter+15*time.Second {
				t.Errorf("RetryAfter %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			if !strings.Contains(e.Message+" "+err.Error(), tt.msg) {
				t.Errorf("message %q lacks %q", err.Error(), tt.msg)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error text leaks the key: %v", err)
			}
		})
	}
}

func TestConnectionRefusedNotRetryable(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	_, err := anthropic.New(anthropic.Config{BaseURL: url}).Stream(context.Background(), conversation(0, 0), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Retryable() || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("err = %v, want a non-retryable connection error", err)
	}
}

// TestCutStreamRetriedFresh runs the adapter behind WithRetry against the
// fake server: the first stream is cut mid-way, the retry succeeds, and the
// reply holds only the second attempt.
func TestCutStreamRetriedFresh(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply{Text: "FIRST ATTEMPT that never finishes", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"cmd":"rm"}`}}, CutAfterBytes: 700},
		llmtest.Reply{Status: 529},
		llmtest.Reply{Text: "second", Usage: llm.Usage{Input: 3, Output: 1}},
	)
	var waits []time.Duration
	p := llm.WithRetry(anthropic.New(anthropic.Config{BaseURL: srv.URL}), llm.RetryOptions{
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		Rand:  func() float64 { return 0 },
	})
	var kinds []llm.ErrorKind
	reply, err := p.Stream(context.Background(), conversation(0, 0), func(e llm.Event) {
		if e.Type == llm.EventRetry {
			kinds = append(kinds, llm.KindOf(e.Err))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Message.Blocks) != 1 || reply.Message.PlainText() != "second" || reply.Usage != (llm.Usage{Input: 3, Output: 1}) {
		t.Errorf("reply %+v holds more than the last attempt", reply)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]llm.ErrorKind{llm.ErrStreamCut, llm.ErrOverloaded}) || len(waits) != 2 {
		t.Errorf("retry events %v, waits %v", kinds, waits)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !bytes.Equal(reqs[0].Body, reqs[2].Body) {
		t.Errorf("%d requests; retries must resend the same body", len(reqs))
	}
}
