package llmtest_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// The fake enforces the prefix check the way the docs describe it, so the
// agent's tests can tell an append-only history from one that edits.
func TestPreservedThinking(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.PreservedThinking()
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"cmd":"ls"}`}}}
	})
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL})
	ctx := context.Background()
	req := &llm.Request{System: "sys", Messages: []llm.Message{
		{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "go"}, {Type: llm.BlockText, Text: "<context>time: 10:00</context>"}}},
	}}
	send := func(r *llm.Request) (*llm.Reply, error) { return p.Stream(ctx, r, nil) }
	reply, err := send(req)
	if err != nil {
		t.Fatal(err)
	}
	th := reply.Message.Blocks[0]
	if th.Type != llm.BlockThinking || th.Thinking != "" || th.Signature == "" || th.Signature == llmtest.FakeSignature {
		t.Fatalf("reply's first block %+v: want an empty thinking block with a bound signature", th)
	}
	call := reply.Message.ToolCalls()[0]
	result := llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: call.ID, Content: "a.go"}}}

	// Append-only: the block's prefix is unchanged (the cache breakpoint
	// moved, which is not an edit).
	next := &llm.Request{System: "sys", Messages: append(append([]llm.Message(nil), req.Messages...), reply.Message, result)}
	if _, err := send(next); err != nil {
		t.Fatalf("append-only request failed: %v", err)
	}
	if f := srv.PrefixFailures(); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}

	// The ephemeral reminder gone from the earlier user message: the
	// documented 400, not retryable.
	edited := &llm.Request{System: "sys", Messages: []llm.Message{llm.Text(llm.RoleUser, "go"), reply.Message, result}}
	_, err = send(edited)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest || e.Retryable() ||
		!strings.Contains(e.Message, "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation.") {
		t.Fatalf("edited prefix: %v", err)
	}

	// A changed system prompt fails the prefix check; a changed thinking
	// text in the latest assistant message is a modified block (A3).
	for name, tc := range map[string]struct {
		r    *llm.Request
		want string
	}{
		"system": {&llm.Request{System: "sys v2", Messages: next.Messages}, "The block is bound to a different conversation"},
		"text": {&llm.Request{System: "sys", Messages: []llm.Message{req.Messages[0],
			{Role: llm.RoleAssistant, Blocks: append([]llm.Block{{Type: llm.BlockThinking, Thinking: "forged", Signature: th.Signature}}, reply.Message.Blocks[1:]...)}, result}},
			"blocks in the latest assistant message cannot be modified"},
	} {
		if _, err := send(tc.r); llm.KindOf(err) != llm.ErrBadRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s changed: err %v, want a 400 with %q", name, err, tc.want)
		}
	}

	// drop_block: the invalid block is dropped and reported.
	edited.Thinking = llm.Thinking{DropBlock: true}
	got, err := send(edited)
	if err != nil {
		t.Fatalf("drop_block: %v", err)
	}
	if want := []string{"messages.1.content.0: prefix_mismatch"}; !reflect.DeepEqual(got.Dropped, want) {
		t.Errorf("dropped %v, want %v", got.Dropped, want)
	}
	if n := len(srv.PrefixFailures()); n != 3 {
		t.Errorf("%d failures recorded, want 3", n)
	}
}

func TestContextLimit(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.ContextLimit(100, nil)
	for _, f := range []string{"anthropic", "openai"} {
		var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL})
		if f == "openai" {
			p = newOpenAI(srv.URL)
		}
		small := &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
		reply, err := p.Stream(context.Background(), small, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if reply.Usage.Prompt() == 0 {
			t.Errorf("%s: no counted usage", f)
		}
		big := &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, strings.Repeat("word ", 200))}}
		_, err = p.Stream(context.Background(), big, nil)
		if llm.KindOf(err) != llm.ErrContextTooLong {
			t.Errorf("%s: over the limit: %v", f, err)
		}
	}
}

func newOpenAI(url string) llm.Provider { return openai.New(openai.Config{BaseURL: url + "/v1"}) }
