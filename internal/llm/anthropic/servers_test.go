package anthropic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// A whitespace-only text block (Claude sometimes streams "\n\n" before a
// tool call) is never sent back: the API rejects the request, and would
// reject every later one of the session.
func TestBlankTextNeverSent(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.SetModes(llmtest.AnthropicRejectsBlank)
	srv.Enqueue(llmtest.Reply{Text: "\n\n", ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: `{"path":"a"}`}}}, llmtest.Reply{Text: "done"})
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	req := &llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{llm.Text(llm.RoleUser, "go")}}
	first, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := first.Message.ToolCalls()
	req.Messages = append(req.Messages, first.Message,
		llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: calls[0].ID, Content: "x"}}},
		// an old session's stored blank-only assistant turn
		llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockText, Text: " \n"}}},
		llm.Text(llm.RoleUser, "and?"))
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("second request: %v", err)
	}
	// The fake does reject one, with the API's words.
	raw := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"  "}]}]}`
	if st, body := llmtest.Reject(srv, llmtest.FormatAnthropic, []byte(raw)); st != 400 || !strings.Contains(body, "non-whitespace text") {
		t.Errorf("fake accepted a blank block: %d %s", st, body)
	}
}

func TestAnthropicServerErrorsAndRefusal(t *testing.T) {
	for _, name := range []string{"anthropic-prompt-too-long", "anthropic-input-max-tokens"} {
		srv := llmtest.NewServer(t)
		r, _ := llmtest.ServerError(name)
		srv.Enqueue(r)
		_, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"}).Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
		if llm.KindOf(err) != llm.ErrContextTooLong {
			t.Errorf("%s: %v", name, err)
		}
	}
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "I can't help with that request.", StopReason: "refusal"})
	reply, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"}).Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
	if err != nil || reply.StopReason != llm.StopRefusal || reply.Message.PlainText() == "" {
		t.Errorf("refusal: %+v %v", reply, err)
	}
}
