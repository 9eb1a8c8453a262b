package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/responses"
)

var tools = []llm.Tool{
	{Name: "read", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "edit", Description: "Edit a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
}

// script is a three-step tool session: two steps that think and call a
// tool, then an answer. The usage is what the fake reports for each step.
var script = []llmtest.Reply{
	{Thinking: "**Reading first**\n\nI should look at main.go before changing it.", ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"main.go"}`}},
		Usage: llm.Usage{Input: 1200, Output: 310, Reasoning: 256}},
	{Thinking: "**Editing**\n\nThe bug is on line 3.", Text: "Found it.", ToolCalls: []llmtest.ToolCall{{Name: "edit", Input: `{"path":"main.go"}`}, {Name: "read", Input: `{"path":"main_test.go"}`}},
		Usage: llm.Usage{Input: 180, CacheRead: 1152, Output: 140, Reasoning: 64}},
	{Text: "Fixed the off-by-one in main.go.", Usage: llm.Usage{Input: 90, CacheRead: 1408, Output: 30}},
}

// session runs the script through the real adapter against the fake and
// returns the replies; the fake rejects any step whose input breaks the
// API's pairing rules, so reaching the end proves reasoning went back.
func session(t *testing.T, srv *llmtest.Server, p *responses.Provider) []*llm.Reply {
	t.Helper()
	srv.Enqueue(script...)
	req := &llm.Request{Model: "gpt-5", System: "You are a coding agent.", Tools: tools, MaxTokens: 8000,
		SessionID: "sess-1", Thinking: llm.Thinking{Effort: "high"},
		Messages: []llm.Message{llm.Text(llm.RoleUser, "Fix the bug in main.go.")}}
	var replies []*llm.Reply
	for step := range script {
		var thinking, text strings.Builder
		var called int
		r, err := p.Stream(context.Background(), req, func(e llm.Event) {
			switch e.Type {
			case llm.EventThinking:
				thinking.WriteString(e.Text)
			case llm.EventText:
				text.WriteString(e.Text)
			case llm.EventToolCall:
				called++
			}
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if thinking.String() != script[step].Thinking || text.String() != script[step].Text || called != len(script[step].ToolCalls) {
			t.Errorf("step %d events: thinking %q text %q calls %d", step, thinking.String(), text.String(), called)
		}
		replies = append(replies, r)
		req.Messages = append(req.Messages, r.Message)
		var results []llm.Block
		for _, c := range r.Message.ToolCalls() {
			results = append(results, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: "ok: " + c.Name})
		}
		if len(results) > 0 {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Blocks: results})
		}
	}
	return replies
}

func TestToolSessionCarriesReasoning(t *testing.T) {
	for _, stream := range []bool{true, false} {
		name := "streaming"
		if !stream {
			name = "whole responses"
		}
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			p, err := responses.New(responses.Config{BaseURL: srv.URL + "/v1", APIKey: "k", NoStream: !stream})
			if err != nil {
				t.Fatal(err)
			}
			replies := session(t, srv, p)
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			var sum llm.Usage
			for i, r := range replies {
				if r.Usage != script[i].Usage {
					t.Errorf("step %d usage %+v, want %+v", i, r.Usage, script[i].Usage)
				}
				sum = sum.Add(r.Usage)
				want := llm.StopToolUse
				if i == 2 {
					want = llm.StopEnd
				}
				if r.StopReason != want || r.Model != "gpt-5-2025-08-07" {
					t.Errorf("step %d: stop %q model %q", i, r.StopReason, r.Model)
				}
			}
			// Each step's reasoning item goes back byte for byte, in every
			// later request, right before the item that followed it.
			for i := range 2 {
				item := replies[i].Message.Blocks[0].Item
				if replies[i].Message.Blocks[0].Thinking != script[i].Thinking || !bytes.Contains(item, []byte(`"encrypted_content":"gAAAAB`)) {
					t.Fatalf("step %d reasoning block %+v", i, replies[i].Message.Blocks[0])
				}
				for j := i + 1; j < 3; j++ {
					if !bytes.Contains(reqs[j].Body, item) {
						t.Errorf("request %d lacks step %d's reasoning item %s", j, i, item)
					}
				}
			}
			var body struct {
				Store          bool     `json:"store"`
				Stream         bool     `json:"stream"`
				Include        []string `json:"include"`
				PromptCacheKey string   `json:"prompt_cache_key"`
				Reasoning      struct{ Effort, Summary string }
				Instructions   string `json:"instructions"`
			}
			if err := json.Unmarshal(reqs[2].Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Store || body.Stream != stream || len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" ||
				body.PromptCacheKey != "sess-1" || body.Reasoning.Effort != "high" || body.Reasoning.Summary != "auto" || body.Instructions != "You are a coding agent." {
				t.Errorf("request settings %+v", body)
			}
			// The ledger: cached tokens apart from input, priced at the
			// catalogue's gpt-5 rates.
			if want := (llm.Usage{Input: 1470, CacheRead: 2560, Output: 480, Reasoning: 320}); sum != want {
				t.Errorf("session usage %+v, want %+v", sum, want)
			}
			m, ok := llm.LookupModel("gpt-5")
			if !ok || m.Price == nil {
				t.Fatal("gpt-5 has no price in the catalogue")
			}
			want := (1470*m.Price.Input + 2560*m.Price.CacheRead + 480*m.Price.Output) / 1e6
			if got := m.Price.Cost(sum); math.Abs(got-want) > 1e-12 {
				t.Errorf("cost %v, want %v", got, want)
			}
		})
	}
}

// Reasoning removed by the context layers (a compaction that unthinks)
// leaves the calls it preceded; their item ids must go too, or the API
// answers that they lack their reasoning item.
func TestUnthoughtHistoryStillAccepted(t *testing.T) {
	srv := llmtest.NewServer(t)
	p, _ := responses.New(responses.Config{BaseURL: srv.URL, APIKey: "k"})
	replies := session(t, srv, p)
	req := &llm.Request{Model: "gpt-5", Tools: tools, Messages: []llm.Message{llm.Text(llm.RoleUser, "Fix it.")}}
	req.Messages = append(req.Messages, replies[0].Message.WithoutThinking(),
		llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: replies[0].Message.ToolCalls()[0].ID, Content: "x"}}})
	srv.Enqueue(llmtest.Reply{Text: "ok"})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if body := srv.Requests()[3].Body; bytes.Contains(body, []byte(`"id":"fc_`)) {
		t.Errorf("a call id went back without its reasoning item: %s", body)
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  llm.ErrorKind
	}{
		{"response.failed", llmtest.Reply{Text: "partial", StreamError: "The server had an error while processing your request."}, llm.ErrOverloaded},
		{"cut before completed", llmtest.Reply{Text: strings.Repeat("word ", 50), CutAfterBytes: 1500}, llm.ErrStreamCut},
		{"429", llmtest.Reply{Status: 429}, llm.ErrRateLimit},
		{"401", llmtest.Reply{Status: 401}, llm.ErrAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(tt.reply)
			p, _ := responses.New(responses.Config{BaseURL: srv.URL, APIKey: "secret-key"})
			_, err := p.Stream(context.Background(), &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
			if llm.KindOf(err) != tt.kind {
				t.Fatalf("error %v (kind %v), want %v", err, llm.KindOf(err), tt.kind)
			}
			if strings.Contains(err.Error(), "secret-key") {
				t.Errorf("key in error: %v", err)
			}
		})
	}
}

func TestContextOverflow(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.ContextLimit(100, nil)
	p, _ := responses.New(responses.Config{BaseURL: srv.URL})
	_, err := p.Stream(context.Background(), &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.Text(llm.RoleUser, strings.Repeat("x", 2000))}}, nil)
	if llm.KindOf(err) != llm.ErrContextTooLong {
		t.Fatalf("error %v, want context too long", err)
	}
}

func TestMaxOutputTokens(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "cut", StopReason: string(llm.StopMaxTokens)}, llmtest.Reply{Text: "cut", StopReason: string(llm.StopMaxTokens), JSON: true})
	p, _ := responses.New(responses.Config{BaseURL: srv.URL})
	for range 2 {
		r, err := p.Stream(context.Background(), &llm.Request{Model: "gpt-4.1", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
		if err != nil || r.StopReason != llm.StopMaxTokens || r.Message.PlainText() != "cut" {
			t.Fatalf("reply %+v, %v", r, err)
		}
	}
	// gpt-4.1 does not reason: no reasoning settings may be sent.
	if b := srv.Requests()[0].Body; bytes.Contains(b, []byte(`"reasoning"`)) || bytes.Contains(b, []byte(`"include"`)) {
		t.Errorf("reasoning settings for a model without reasoning: %s", b)
	}
}

// An organisation that is not verified gets a 400 for reasoning
// summaries; the session goes on without them, saying so once.
func TestLearnsSummaryRejected(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: 400, ErrorBody: `{"error":{"message":"Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.","type":"invalid_request_error","param":"reasoning.summary","code":"unsupported_value"}}`},
		llmtest.Reply{Text: "hello"}, llmtest.Reply{Text: "again"})
	p, _ := responses.New(responses.Config{BaseURL: srv.URL})
	var notices int
	req := &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	for range 2 {
		if _, err := p.Stream(context.Background(), req, func(e llm.Event) {
			if e.Type == llm.EventNotice {
				notices++
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if notices != 1 || len(reqs) != 3 || bytes.Contains(reqs[1].Body, []byte(`"summary"`)) || bytes.Contains(reqs[2].Body, []byte(`"summary"`)) {
		t.Errorf("notices %d, requests %d, last body %s", notices, len(reqs), reqs[len(reqs)-1].Body)
	}
}

// The body of a longer conversation extends the shorter one's: the prefix
// the provider caches stays the same bytes.
func TestBodyIsStable(t *testing.T) {
	p, _ := responses.New(responses.Config{})
	req := &llm.Request{Model: "gpt-5", System: "s", Tools: tools, SessionID: "x", Messages: []llm.Message{llm.Text(llm.RoleUser, "a")}}
	a, _ := p.MarshalRequest(req)
	again, _ := p.MarshalRequest(req)
	req.Messages = append(req.Messages, llm.Text(llm.RoleAssistant, "b"), llm.Text(llm.RoleUser, "c"))
	b, _ := p.MarshalRequest(req)
	if !bytes.Equal(a, again) || !bytes.HasPrefix(b, bytes.TrimSuffix(a, []byte("]}"))) {
		t.Errorf("bodies not stable:\n%s\n%s", a, b)
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ base, want string }{
		{"", "https://api.openai.com/v1/responses"},
		{"https://api.openai.com/v1/", "https://api.openai.com/v1/responses"},
		{"http://localhost:8080", "http://localhost:8080/v1/responses"},
		{"https://res.openai.azure.com/openai/v1", "https://res.openai.azure.com/openai/v1/responses"},
		{"https://res.openai.azure.com/openai?api-version=2025-04-01-preview", "https://res.openai.azure.com/openai/responses?api-version=2025-04-01-preview"},
	}
	for _, tt := range tests {
		if got, err := responses.Endpoint(tt.base); err != nil || got != tt.want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", tt.base, got, err, tt.want)
		}
	}
	if _, err := responses.Endpoint("not a url"); err == nil {
		t.Error("a base URL without scheme was accepted")
	}
}

// Azure's v1 Responses endpoint: the key goes in api-key as Azure
// documents it, and the deployment name is the model.
func TestAzure(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "hi"})
	p, _ := responses.New(responses.Config{BaseURL: srv.URL + "/openai/v1", APIKey: "az-key"})
	if _, err := p.Stream(context.Background(), &llm.Request{Model: "my-gpt5-deployment", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; r.Path != "/openai/v1/responses" {
		t.Errorf("path %s", r.Path)
	}
	if !responses.IsAzure("https://myres.openai.azure.com/openai/v1") || responses.IsAzure("https://api.openai.com/v1") {
		t.Error("IsAzure")
	}
}

func TestReasons(t *testing.T) {
	for model, want := range map[string]bool{"gpt-5": true, "gpt-5.1-codex": true, "o4-mini": true, "openai/gpt-5-mini": true, "gpt-4.1": false, "gpt-4o": false, "gpt-5-chat-latest": false} {
		if got := responses.Reasons(model); got != want {
			t.Errorf("Reasons(%q) = %v", model, got)
		}
	}
}

func TestDecodeResponseFailed(t *testing.T) {
	_, err := responses.DecodeResponse([]byte(`{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrOverloaded {
		t.Fatalf("%v", err)
	}
}

func TestUse(t *testing.T) {
	tests := []struct {
		wire, profile, base, model string
		want                       bool
	}{
		{"", "", "", "gpt-5", true},
		{"", "", "https://api.openai.com/v1", "gpt-5.1-codex", true},
		{"", "", "https://api.openai.com/v1", "gpt-4o", false},
		{"", "", "https://openrouter.ai/api/v1", "openai/gpt-5", false},
		{"", "", "http://localhost:11434/v1", "gpt-oss:20b", false},
		{"", "openai", "", "gpt-5", false},
		{"responses", "", "https://res.openai.azure.com/openai/v1", "my-deployment", true},
		{"chat", "", "", "gpt-5", false},
	}
	for _, tt := range tests {
		if got := responses.Use(tt.wire, tt.profile, tt.base, tt.model); got != tt.want {
			t.Errorf("Use(%q, %q, %q, %q) = %v", tt.wire, tt.profile, tt.base, tt.model, got)
		}
	}
}

// A session resumed against another account (another key, another Azure
// resource) holds reasoning items that server cannot decrypt: it answers
// 400 "could not be verified". The provider leaves those items out from
// then on, says so once, and keeps sending back the ones it received.
func TestForeignReasoningLeftOut(t *testing.T) {
	first := llmtest.NewServer(t)
	p1, _ := responses.New(responses.Config{BaseURL: first.URL})
	replies := session(t, first, p1)
	history := []llm.Message{llm.Text(llm.RoleUser, "Fix the bug in main.go.")}
	for _, r := range replies[:2] {
		history = append(history, r.Message)
		var res []llm.Block
		for _, c := range r.Message.ToolCalls() {
			res = append(res, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: "ok"})
		}
		history = append(history, llm.Message{Role: llm.RoleUser, Blocks: res})
	}

	second := llmtest.NewServer(t)
	second.Enqueue(llmtest.Reply{Thinking: "Again.", ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"b"}`}}}, llmtest.Reply{Text: "done"})
	p2, _ := responses.New(responses.Config{BaseURL: second.URL})
	req := &llm.Request{Model: "gpt-5", Tools: tools, Messages: history}
	var notices []string
	on := func(e llm.Event) {
		if e.Type == llm.EventNotice {
			notices = append(notices, e.Text)
		}
	}
	r, err := p2.Stream(context.Background(), req, on)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r.Message, llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: r.Message.ToolCalls()[0].ID, Content: "ok"}}})
	if _, err := p2.Stream(context.Background(), req, on); err != nil {
		t.Fatal(err)
	}
	reqs := second.Requests()
	if len(reqs) != 3 || len(notices) != 1 || !strings.Contains(notices[0], "cannot verify") {
		t.Fatalf("%d requests, notices %q", len(reqs), notices)
	}
	own := r.Message.Blocks[0].Item
	if bytes.Contains(reqs[2].Body, replies[0].Message.Blocks[0].Item) || !bytes.Contains(reqs[2].Body, own) {
		t.Errorf("last request: foreign items kept or own item lost: %s", reqs[2].Body)
	}
}

// With Store the server keeps the items: nothing encrypted is asked for,
// and a reasoning item goes back by its id and summary.
func TestStoredSession(t *testing.T) {
	srv := llmtest.NewServer(t)
	p, _ := responses.New(responses.Config{BaseURL: srv.URL, Store: true})
	replies := session(t, srv, p)
	if item := replies[0].Message.Blocks[0].Item; bytes.Contains(item, []byte("encrypted_content")) {
		t.Errorf("encrypted content with store: %s", item)
	}
	body := srv.Requests()[2].Body
	if !bytes.Contains(body, []byte(`"store":true`)) || bytes.Contains(body, []byte(`"include"`)) || !bytes.Contains(body, replies[1].Message.Blocks[0].Item) {
		t.Errorf("stored request %s", body)
	}
}
