package llmtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// A server that stops sending without closing the connection must not hang
// the session: the idle watchdog ends the request as a cut stream, which
// the retry wrapper sends again fresh.
func TestStalledStreamIsCutAndRetried(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(
				llmtest.Reply{Text: "this reply stalls between every chunk", Delay: 2 * time.Second},
				llmtest.Reply{Text: "fresh"},
			)
			var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL, IdleTimeout: 200 * time.Millisecond})
			if format == "openai" {
				p = openai.New(openai.Config{BaseURL: srv.URL, IdleTimeout: 200 * time.Millisecond})
			}
			_, err := p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
			if llm.KindOf(err) != llm.ErrStreamCut || !strings.Contains(err.Error(), "nothing arrived") {
				t.Fatalf("err = %v, want a cut stream saying nothing arrived", err)
			}
			noWait := func(context.Context, time.Duration) error { return nil }
			reply, err := llm.WithRetry(p, llm.RetryOptions{Sleep: noWait}).Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
			if err != nil || reply.Message.PlainText() != "fresh" {
				t.Fatalf("after a stall: reply %v, err %v", reply, err)
			}
		})
	}
}

// The user's own cancellation stays a cancellation, not a retryable error.
func TestCancelIsNotAStall(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "slow reply", Delay: time.Second})
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, IdleTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, &llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, nil)
	if err != context.DeadlineExceeded {
		t.Fatalf("err = %v, want the context's error", err)
	}
}
