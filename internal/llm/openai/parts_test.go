package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// A Magistral reply, whose content arrives as arrays of thinking and text
// parts, is decoded whole through the real adapter, streamed or not: its
// reasoning as thinking, its answer as text, and nothing retried.
func TestMagistralContentParts(t *testing.T) {
	for _, whole := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		srv.SetModes(llmtest.MistralContentParts)
		srv.Enqueue(llmtest.Reply{Thinking: "The user greets me, so I greet back.", Text: "Bonjour ! Comment puis-je aider ?", JSON: whole,
			ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"a"}`}}})
		p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Profile: "mistral"})
		var thinking, text strings.Builder
		r, err := p.Stream(context.Background(), &llm.Request{Model: "magistral-medium-2509", Messages: []llm.Message{llm.Text(llm.RoleUser, "Salut")}}, func(e llm.Event) {
			switch e.Type {
			case llm.EventThinking:
				thinking.WriteString(e.Text)
			case llm.EventText:
				text.WriteString(e.Text)
			}
		})
		if err != nil {
			t.Fatalf("whole=%v: %v", whole, err)
		}
		if len(r.Message.Blocks) != 3 || r.Message.Blocks[0].Thinking != "The user greets me, so I greet back." ||
			r.Message.PlainText() != "Bonjour ! Comment puis-je aider ?" || r.StopReason != llm.StopToolUse {
			t.Errorf("whole=%v: reply %+v", whole, r.Message.Blocks)
		}
		if thinking.String() != r.Message.Blocks[0].Thinking || text.String() != r.Message.PlainText() {
			t.Errorf("whole=%v: events thinking %q text %q", whole, thinking.String(), text.String())
		}
		if body := srv.Requests()[0]; len(srv.Requests()) != 1 || body.Path != "/v1/chat/completions" {
			t.Errorf("whole=%v: %d requests", whole, len(srv.Requests()))
		}
	}
}

// The other array shapes servers send: gpt-oss's reasoning parts with a
// summary, text parts, and a part of an unknown type, which is skipped.
func TestContentPartShapes(t *testing.T) {
	body := `{"model":"gpt-oss-120b","choices":[{"index":0,"message":{"role":"assistant","content":[` +
		`{"type":"reasoning","summary":[{"type":"summary_text","text":"Think. "}]},` +
		`{"type":"thinking","thinking":"More."},` +
		`{"type":"image_url","image_url":{"url":"x"}},` +
		`{"type":"text","text":"Answer."}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`
	r, err := openai.DecodeResponse([]byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Blocks[0].Thinking != "Think. More." || r.Message.PlainText() != "Answer." {
		t.Errorf("%+v", r.Message.Blocks)
	}
}
