package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// isCompaction tells the fake server's handler a summarisation request.
func isCompaction(r llmtest.Request) bool {
	// The instruction can sit where the fake looks for a reminder (last,
	// without a cache marker).
	if strings.Contains(r.Reminder, "Write that note now") {
		return true
	}
	if n := len(r.Messages); n > 0 {
		last := r.Messages[n-1]
		for _, b := range last.Blocks {
			if b.Type == llm.BlockText && (strings.Contains(b.Text, "Write that note now") || strings.Contains(b.Text, "updated handoff note")) {
				return true
			}
		}
	}
	return false
}

// stepsInTurn counts the assistant messages since the last user prompt
// (a closed round, its last call and result restated as text, is not one).
func stepsInTurn(msgs []llm.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == llm.RoleUser && history.PromptText(m) != "" && !hasResult(m) && !closedRound(m) {
			break
		}
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// closedRound reports whether m restates a closed round's call and result
// (history.Edit.Close), as the model reads it.
func closedRound(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockText && strings.Contains(b.Text, history.ClosedRound) {
			return true
		}
	}
	return false
}

func hasResult(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

type session40 struct {
	srv   *llmtest.Server
	agent *agent.Agent
	hist  *history.History
	log   string
	notes []string
}

type noteObs struct{ notes *[]string }

func (noteObs) OnEvent(llm.Event)                             {}
func (noteObs) OnToolStart(llm.Block)                         {}
func (noteObs) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (noteObs) OnReply(*llm.Reply)                            {}
func (o noteObs) OnNotice(n notice.Notice)                    { *o.notes = append(*o.notes, n.Text) }

func newSession40(t *testing.T, format string, cfg history.Config, appendOnly bool, handler func(llmtest.Request) llmtest.Reply) *session40 {
	t.Helper()
	model := "claude-sonnet-5-5"
	if format == "deepseek" {
		model = "deepseek-v4-pro"
	}
	s := newLoopSession(t, format, model, cfg, appendOnly)
	s.srv.Handle(handler)
	return s
}

// newLoopSession is the real loop in a fresh project: an adapter of the
// given wire format (anthropic, openai or deepseek) pointed at a fake
// server (scripted by the caller, with Handle or Enqueue), every tool
// allowed, the reminder on, and a session log.
func newLoopSession(t *testing.T, format, model string, cfg history.Config, appendOnly bool) *session40 {
	t.Helper()
	srv := llmtest.NewServer(t)
	var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	switch format {
	case "openai":
		p = openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k"})
	case "deepseek":
		p = openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Profile: "deepseek"})
	}
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "s.jsonl")
	lg, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "s40"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	cfg.SpillDir = t.TempDir()
	h := history.New(cfg)
	a := agent.New(agent.Options{
		Provider: p, Model: model, System: "You are harness.", SessionID: "s40",
		Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), tools.Builtins(&tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}})...),
		History: h, Log: lg, Reminder: reminder.New(pol.Project(), nil), AppendOnly: appendOnly,
	})
	return &session40{srv: srv, agent: a, hist: h, log: logPath}
}

// TestPreservedThinkingSession is the append-only contract end to end: 40
// model steps through the real loop, the real Anthropic adapter and a fake
// server that enforces the prefix check on every thinking block, with
// strips, a failed compaction that backs off, a drop, automatic
// compactions, an interactive /compact and a /rewind. No request may fail
// the check, and every request inside a tool loop carries the turn's latest
// thinking block as it was received.
func TestPreservedThinkingSession(t *testing.T) {
	testenv.Slow(t)
	failCompaction := 0 // set after /compact: the next automatic ones fail and back off
	big := map[int]bool{2: true, 4: true, 6: true, 8: true}
	turn := 0
	s := newSession40(t, "anthropic", history.Config{Window: 12000, Strategy: history.Append}, true, func(r llmtest.Request) llmtest.Reply {
		if isCompaction(r) {
			if failCompaction > 0 {
				failCompaction--
				return llmtest.Reply{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"llmtest: the summary request is refused once"}}`}
			}
			return llmtest.Reply{Text: "<summary>## Goal\ncount\n## State\nfine</summary>"}
		}
		if n := stepsInTurn(r.Messages); n < 4 {
			lines := 150
			calls := []llmtest.ToolCall{{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 %d"}`, lines)}}
			if big[turn] {
				// Two large outputs a step: more than a strip keeps up with.
				calls = []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 1200"}`}, {Name: "bash", Input: `{"command":"seq 2 1201"}`}}
			}
			return llmtest.Reply{Thinking: fmt.Sprintf("step %d of turn %d", n, turn), ToolCalls: calls}
		}
		return llmtest.Reply{Text: fmt.Sprintf("turn %d done", turn)}
	})
	s.srv.PreservedThinking()
	s.srv.ContextLimit(1<<30, nil) // count tokens, refuse nothing
	ctx := context.Background()
	obs := noteObs{&s.notes}
	steps := 0
	for turn = 1; steps < 40; turn++ {
		prompt := fmt.Sprintf("turn %d: count for me", turn)
		res, err := s.agent.Run(ctx, prompt, obs)
		if err != nil {
			t.Fatalf("turn %d: %v\nnotices: %q", turn, err, s.notes)
		}
		steps += res.Steps
		t.Logf("turn %d: %d steps, tokens %d, stats %+v", turn, res.Steps, s.hist.Tokens(), s.hist.Stats())
		switch turn {
		case 3:
			if err := s.agent.Compact(ctx, "", obs); err != nil {
				t.Fatalf("/compact: %v", err)
			}
			failCompaction = 2
		case 7:
			if _, _, err := s.agent.Rewind(1); err != nil {
				t.Fatalf("/rewind: %v", err)
			}
		}
	}
	if f := s.srv.PrefixFailures(); len(f) > 0 {
		t.Fatalf("%d thinking blocks failed the prefix check: %v", len(f), f)
	}
	st := s.hist.Stats()
	t.Logf("%d steps over %d turns, %d requests; stats %+v; notices %q", steps, turn-1, len(s.srv.Requests()), st, s.notes)
	if st.Strips == 0 || st.Drops == 0 || st.Compactions < 3 {
		t.Errorf("the session did not exercise every layer: %+v (want strips, a drop, 2 automatic compactions and /compact)", st)
	}
	for i, r := range s.srv.Requests() {
		if isCompaction(r) {
			continue
		}
		n := len(r.Messages)
		if n < 2 || !hasResult(r.Messages[n-1]) {
			continue // a turn's first request: no reasoning of it yet
		}
		prev := r.Messages[n-2]
		if prev.Role != llm.RoleAssistant || len(prev.Blocks) == 0 || prev.Blocks[0].Type != llm.BlockThinking || prev.Blocks[0].Signature == "" {
			t.Errorf("request %d: the latest assistant turn was sent back without its thinking: %+v", i, prev.Blocks)
		}
	}
}

// The control: today's harness policy (an ephemeral reminder appended and
// dropped, strips inside a turn) on the same server fails the prefix check
// on the first tool loop, as the issue reports.
func TestEphemeralReminderFailsPrefixCheck(t *testing.T) {
	s := newSession40(t, "anthropic", history.Config{}, false, func(r llmtest.Request) llmtest.Reply {
		if stepsInTurn(r.Messages) < 2 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo hi"}`}}}
		}
		return llmtest.Reply{Text: "done"}
	})
	s.srv.PreservedThinking()
	_, err := s.agent.Run(context.Background(), "go", nil)
	if err == nil || !strings.Contains(err.Error(), "The block is bound to a different conversation") {
		t.Fatalf("err = %v, want the prefix-check 400", err)
	}
	if len(s.srv.PrefixFailures()) == 0 {
		t.Error("no prefix failure recorded")
	}
}
