package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// reserveSession is the real loop on claude-sonnet-4-5 with a thinking
// budget, against a fake whose window is window and which, with thinking
// on, counts max_tokens in; the history reserves maxTokens as the app's
// does.
func reserveSession(t *testing.T, window, maxTokens, budget int) (*llmtest.Server, *agent.Agent, *history.History) {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.ContextLimit(window, nil)
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := history.New(history.Config{Window: window, Reserve: maxTokens, SpillDir: t.TempDir()})
	a := agent.New(agent.Options{
		Provider: anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"}), Model: "claude-sonnet-4-5",
		System: "You are harness.", SessionID: "r",
		Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), tools.Builtins(&tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}})...),
		History: h, MaxSteps: 60, MaxTokens: maxTokens,
		Thinking: llm.Thinking{Mode: llm.ThinkingBudget, Budget: budget},
	})
	return srv, a, h
}

// With MAX_TOKENS over half the window the reserve is half the window, and
// each request's max_tokens is lowered to what the prompt leaves, its
// thinking budget kept below it: a turn whose prompt grows well past the
// half is never refused (the fake checks prompt + max_tokens against the
// window and the budget against max_tokens).
func TestReplyLimitFitsTheWindow(t *testing.T) {
	testenv.Slow(t)
	const window, maxTokens, budget = 40000, 32000, 24000
	srv, a, h := reserveSession(t, window, maxTokens, budget)
	if h.Reserve() != window/2 {
		t.Fatalf("reserve %d, want half the window", h.Reserve())
	}
	var mu sync.Mutex
	step := 0
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if r.Tokens+r.MaxTokens > window {
			return llmtest.Reply{Text: "refused anyway"}
		}
		if isCompaction(r) {
			return llmtest.Reply{Text: "<summary>## Goal\ncount\n## State\nsome way</summary>"}
		}
		step++
		if step > 40 {
			return llmtest.Reply{Text: "task finished"}
		}
		// Old assistant text stays whole: the prompt grows towards the
		// working window.
		return llmtest.Reply{Text: strings.Repeat(fmt.Sprintf("step %d, thinking aloud. ", step), 40),
			ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 600 # %d"}`, step)}}}
	})
	res, err := a.Run(context.Background(), "count", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "task finished" {
		t.Errorf("final text %q", res.Text)
	}
	lowered, least := 0, maxTokens
	for i, r := range srv.Requests() {
		least = min(least, r.MaxTokens)
		if r.Rejected != "" || r.Tokens+r.MaxTokens > window {
			t.Errorf("request %d refused: %d + %d > %d: %s", i, r.Tokens, r.MaxTokens, window, r.Rejected)
		}
		if r.MaxTokens < maxTokens {
			lowered++
		}
	}
	if lowered == 0 || least > budget {
		t.Errorf("max_tokens went down to %d in %d requests: the prompt never left less than the budget (%d), the test proves nothing", least, lowered, budget)
	}
	t.Logf("%d requests, %d with max_tokens lowered, down to %d", len(srv.Requests()), lowered, least)
}

// A session whose replies keep being cut raises its output limit, and the
// window's reserve grows with it.
func TestRaisedOutputLimitGrowsTheReserve(t *testing.T) {
	srv, a, h := reserveSession(t, 200000, 4096, 2048)
	for i := 0; i < 2; i++ {
		srv.Enqueue(llmtest.Reply{StopReason: "max_tokens", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo cut"}`}}})
	}
	srv.Enqueue(llmtest.Reply{Text: "done"})
	if _, err := a.Run(context.Background(), "write a big file", nil); err != nil {
		t.Fatal(err)
	}
	if h.Reserve() != 8192 || h.Config().Window != 200000-8192 {
		t.Errorf("after the raise to 8192: reserve %d, working window %d", h.Reserve(), h.Config().Window)
	}
	if rs := srv.Requests(); rs[len(rs)-1].MaxTokens != 8192 {
		t.Errorf("last request's max_tokens %d, want 8192", rs[len(rs)-1].MaxTokens)
	}
}
