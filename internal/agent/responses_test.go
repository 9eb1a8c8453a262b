package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/responses"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// TestResponsesSession is a GPT-5 session over OpenAI's Responses API
// through the real loop, the real adapter and a fake server that enforces
// the API's pairing rules: about 30 steps in tool loops whose every step
// reasons, with the context layers stripping and compacting under a small
// window. No request may be refused, every request inside a tool loop
// sends the turn's latest reasoning item back as it was received, and the
// session's usage is the sum the server reported for its steps.
func TestResponsesSession(t *testing.T) {
	testenv.Slow(t)
	srv := llmtest.NewServer(t)
	p, err := responses.New(responses.Config{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lg, err := sessionlog.Create(filepath.Join(t.TempDir(), "s.jsonl"), sessionlog.Meta{ID: "resp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	h := history.New(history.Config{Window: 12000, SpillDir: t.TempDir()})
	a := agent.New(agent.Options{
		Provider: p, Model: "gpt-5", System: "You are harness.", SessionID: "resp",
		Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), tools.Builtins(&tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}})...),
		History: h, Log: lg, Reminder: reminder.New(pol.Project(), nil),
	})
	srv.ContextLimit(1<<30, nil) // count tokens, refuse nothing
	var served llm.Usage
	srv.Handle(func(r llmtest.Request) llmtest.Reply {
		u := llm.Usage{Input: r.Tokens / 2, CacheRead: r.Tokens - r.Tokens/2, Output: 120, Reasoning: 64}
		if isCompaction(r) {
			return llmtest.Reply{Text: "<summary>## Goal\ncount\n## State\nfine</summary>", Usage: u}
		}
		served = served.Add(u) // the loop's own steps (a compaction's reply is not one)
		if n := stepsInTurn(r.Messages); n < 5 {
			return llmtest.Reply{Thinking: fmt.Sprintf("**Step %d**\n\nCount further.", n), Usage: u,
				ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 %d"}`, 300+200*n)}}}
		}
		return llmtest.Reply{Text: "done", Usage: u}
	})
	var used llm.Usage
	obs := replyObs{func(r *llm.Reply) { used = used.Add(r.Usage) }}
	steps := 0
	for turn := 1; steps < 30; turn++ {
		res, err := a.Run(context.Background(), fmt.Sprintf("turn %d: count for me", turn), obs)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		steps += res.Steps
	}
	st := h.Stats()
	t.Logf("%d steps, %d requests, stats %+v", steps, len(srv.Requests()), st)
	if st.Strips == 0 || st.Compactions == 0 {
		t.Errorf("the layers did not act: %+v", st)
	}
	carried := 0
	for i, r := range srv.Requests() {
		n := len(r.Messages)
		if isCompaction(r) || n < 2 || !hasResult(r.Messages[n-1]) {
			continue
		}
		prev := r.Messages[n-2]
		if prev.Role != llm.RoleAssistant || len(prev.Blocks) == 0 || prev.Blocks[0].Type != llm.BlockThinking ||
			!bytes.Contains(prev.Blocks[0].Item, []byte(`"encrypted_content":"gAAAAB`)) {
			t.Errorf("request %d: the latest step went back without its reasoning item: %+v", i, prev.Blocks)
		}
		carried++
	}
	if carried < 20 {
		t.Errorf("only %d requests inside tool loops", carried)
	}
	if used != served || used.Reasoning == 0 {
		t.Errorf("usage %+v, the server reported %+v", used, served)
	}
}

// replyObs sees each reply.
type replyObs struct{ f func(*llm.Reply) }

func (replyObs) OnEvent(llm.Event)                             {}
func (replyObs) OnToolStart(llm.Block)                         {}
func (replyObs) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (o replyObs) OnReply(r *llm.Reply)                        { o.f(r) }
func (replyObs) OnNotice(notice.Notice)                        {}
