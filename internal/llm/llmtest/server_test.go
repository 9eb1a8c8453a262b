package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// providers returns both adapters pointed at srv, with and without /v1.
func providers(srv *llmtest.Server) map[string]llm.Provider {
	return map[string]llm.Provider{
		"anthropic":    anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key"}),
		"anthropic/v1": anthropic.New(anthropic.Config{BaseURL: srv.URL + "/v1/"}),
		"openai":       openai.New(openai.Config{BaseURL: srv.URL}),
		"openai/v1":    openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "test-key"}),
	}
}

func toolReq() *llm.Request {
	return &llm.Request{
		Model:  "m",
		System: "be brief",
		Tools: []llm.Tool{
			{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)},
			{Name: "read_file", Description: "read", Schema: json.RawMessage(`{"type":"object"}`)},
		},
		Messages: []llm.Message{
			llm.Text(llm.RoleUser, "list files"),
			{Role: llm.RoleAssistant, Blocks: []llm.Block{
				{Type: llm.BlockText, Text: "ok"},
				{Type: llm.BlockToolUse, ID: "c1", Name: "bash", Input: json.RawMessage(`{"cmd":"ls"}`)},
			}},
			{Role: llm.RoleUser, Blocks: []llm.Block{
				{Type: llm.BlockToolResult, ToolUseID: "c1", Content: "a.go\nb.go"},
			}},
		},
		Reminder:  "It is Monday.",
		MaxTokens: 100,
	}
}

func TestServerBothFormats(t *testing.T) {
	srv := llmtest.NewServer(t)
	for name, p := range providers(srv) {
		t.Run(name, func(t *testing.T) {
			srv.Enqueue(llmtest.Reply{
				Thinking: "let me think about ünïcode",
				Text:     "Reading both files now, then I will answer.",
				ToolCalls: []llmtest.ToolCall{
					{Name: "read_file", Input: `{"path":"a.go"}`},
					{ID: "x2", Name: "read_file", Input: `{"path":"b.go","limit":10}`},
				},
				Usage: llm.Usage{Input: 7, CacheRead: 100, Output: 20},
			})
			var text, thinking strings.Builder
			var calls []string
			reply, err := p.Stream(context.Background(), toolReq(), func(e llm.Event) {
				switch e.Type {
				case llm.EventText:
					text.WriteString(e.Text)
				case llm.EventThinking:
					thinking.WriteString(e.Text)
				case llm.EventToolCall:
					calls = append(calls, e.Block.Name+string(e.Block.Input))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := reply.Message.PlainText(); got != "Reading both files now, then I will answer." || text.String() != got {
				t.Errorf("text = %q, streamed %q", got, text.String())
			}
			if thinking.String() != "let me think about ünïcode" {
				t.Errorf("thinking = %q", thinking.String())
			}
			wantCalls := []string{`read_file{"path":"a.go"}`, `read_file{"path":"b.go","limit":10}`}
			if strings.Join(calls, "|") != strings.Join(wantCalls, "|") {
				t.Errorf("tool call events = %q, want %q", calls, wantCalls)
			}
			tc := reply.Message.ToolCalls()
			if len(tc) != 2 || tc[1].ID != "x2" || tc[0].ID == "" {
				t.Errorf("tool calls = %+v", tc)
			}
			if reply.StopReason != llm.StopToolUse {
				t.Errorf("stop = %q", reply.StopReason)
			}
			want := llm.Usage{Input: 7, CacheRead: 100, Output: 20}
			if reply.Usage != want {
				t.Errorf("usage = %+v, want %+v", reply.Usage, want)
			}

			reqs := srv.Requests()
			got := reqs[len(reqs)-1]
			if got.DecodeErr != nil {
				t.Fatal(got.DecodeErr)
			}
			if got.System != "be brief" || got.Model != "m" || got.MaxTokens != 100 || !got.Stream {
				t.Errorf("decoded request = %+v", got)
			}
			if strings.Join(got.Tools, ",") != "bash,read_file" {
				t.Errorf("tools = %q", got.Tools)
			}
			if got.Reminder != "It is Monday." {
				t.Errorf("reminder = %q", got.Reminder)
			}
			wantMsgs := toolReq().Messages
			if len(got.Messages) != len(wantMsgs) {
				t.Fatalf("messages = %+v", got.Messages)
			}
			for i := range wantMsgs {
				g, _ := json.Marshal(got.Messages[i])
				w, _ := json.Marshal(wantMsgs[i])
				if string(g) != string(w) {
					t.Errorf("message %d = %s, want %s", i, g, w)
				}
			}
		})
	}
}

func TestServerDefaultsAndHandler(t *testing.T) {
	srv := llmtest.NewServer(t)
	p := openai.New(openai.Config{BaseURL: srv.URL})
	r, err := p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.PlainText() != llmtest.DefaultText || r.StopReason != llm.StopEnd {
		t.Errorf("default reply = %+v", r)
	}
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "echo: " + req.Messages[len(req.Messages)-1].PlainText()}
	})
	srv.Enqueue(llmtest.Reply{Text: "queued first"})
	for _, want := range []string{"queued first", "echo: hi"} {
		r, err := p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Message.PlainText(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3", n)
	}
}

func TestServerFailures(t *testing.T) {
	srv := llmtest.NewServer(t)
	for name, p := range providers(srv) {
		t.Run(name, func(t *testing.T) {
			tests := []struct {
				reply llmtest.Reply
				kind  llm.ErrorKind
			}{
				{llmtest.Reply{Status: 401}, llm.ErrAuth},
				{llmtest.Reply{Status: 429, RetryAfter: "7"}, llm.ErrRateLimit},
				{llmtest.Reply{Status: 529}, llm.ErrOverloaded},
				{llmtest.Reply{Status: 400}, llm.ErrBadRequest},
				{llmtest.Reply{Text: "partial answer that will be cut", CutAfterBytes: 300}, llm.ErrStreamCut},
				{llmtest.Reply{Text: "half", StreamError: "Overloaded"}, llm.ErrOverloaded},
			}
			for _, tt := range tests {
				srv.Enqueue(tt.reply)
				_, err := p.Stream(context.Background(), toolReq(), nil)
				if k := llm.KindOf(err); k != tt.kind {
					t.Errorf("%+v: kind %v (%v), want %v", tt.reply, k, err, tt.kind)
				}
				var e *llm.Error
				if tt.kind == llm.ErrRateLimit && errors.As(err, &e) && e.RetryAfter != 7*time.Second {
					t.Errorf("RetryAfter = %v, want 7s", e.RetryAfter)
				}
				if err != nil && strings.Contains(err.Error(), "test-key") {
					t.Errorf("error leaks the key: %v", err)
				}
			}
		})
	}
}

func TestServerJSONReply(t *testing.T) {
	srv := llmtest.NewServer(t)
	for name, p := range providers(srv) {
		t.Run(name, func(t *testing.T) {
			srv.Enqueue(llmtest.Reply{JSON: true, Text: "whole", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"cmd":"pwd"}`}},
				Usage: llm.Usage{Input: 3, Output: 4}})
			var events int
			r, err := p.Stream(context.Background(), toolReq(), func(llm.Event) { events++ })
			if err != nil {
				t.Fatal(err)
			}
			if r.Message.PlainText() != "whole" || len(r.Message.ToolCalls()) != 1 || r.Usage != (llm.Usage{Input: 3, Output: 4}) {
				t.Errorf("reply = %+v", r)
			}
			if events != 2 {
				t.Errorf("events = %d, want 2 (text, tool call)", events)
			}
		})
	}
}

func TestServerDelayInterruptible(t *testing.T) {
	srv := llmtest.NewServer(t)
	// Without cancellation this stream would take 100 hours; the cancel
	// fired from the first event must end it.
	srv.Enqueue(llmtest.Reply{Text: strings.Repeat("slow words ", 100), Delay: time.Hour})
	srv.Enqueue(llmtest.Reply{Text: "next"})
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the request has reached the server.
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Stream(ctx, toolReq(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	r, err := p.Stream(context.Background(), toolReq(), nil)
	if err != nil || r.Message.PlainText() != "next" {
		t.Errorf("after an interrupted stream: %v, %v", r, err)
	}
}
