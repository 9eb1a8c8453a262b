package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// thinkingSession is the real loop on a preserved-thinking model (the
// Anthropic format, claude-sonnet-5-5, thinking adaptive) or on DeepSeek's
// thinking mode, with the append strategy, against a fake server that
// enforces every documented thinking rule and the window.
func thinkingSession(t *testing.T, format string, cfg history.Config, maxSteps int) *session40 {
	t.Helper()
	srv := llmtest.NewServer(t)
	model := "claude-sonnet-5-5"
	var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	if format == "deepseek" {
		model = "deepseek-v4-pro"
		p = openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Profile: "deepseek"})
		srv.SetModes(llmtest.DeepSeekThinking)
	} else {
		srv.PreservedThinking()
	}
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "s.jsonl")
	lg, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "s300"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	cfg.SpillDir = t.TempDir()
	cfg.Strategy = history.Append
	// What the app does (app.newHistory): the window keeps the reply's
	// max_tokens free, which both servers count against it here.
	cfg.Reserve = sessionMaxTokens
	h := history.New(cfg)
	a := agent.New(agent.Options{
		Provider: p, Model: model, System: "You are harness.", SessionID: "s300",
		Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), tools.Builtins(&tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}})...),
		History: h, Log: lg, Reminder: reminder.New(pol.Project(), nil), AppendOnly: true,
		Thinking: llm.Thinking{Mode: llm.ThinkingAdaptive}, MaxSteps: maxSteps, MaxTokens: sessionMaxTokens,
	})
	return &session40{srv: srv, agent: a, hist: h, log: logPath}
}

// sessionMaxTokens is thinkingSession's output limit.
const sessionMaxTokens = 2048

// longTurn scripts a single user turn of steps tool calls: each step
// thinks and runs a command whose output varies in size (mostly a few
// hundred lines, every seventh a large one the cap cuts), then a final
// answer. Summarisation requests are answered with a note, except those
// failN says to refuse (a summariser that fails, so the drop layer acts).
// Only requests that fit limit count as steps: the fake calls the handler
// for refused ones too.
func longTurn(steps, limit int, failN func(n int) bool) func(llmtest.Request) llmtest.Reply {
	var mu sync.Mutex
	step, summaries := 0, 0
	return func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if isCompaction(r) {
			summaries++
			if failN(summaries) {
				return llmtest.Reply{Status: 500, ErrorBody: `{"type":"error","error":{"type":"api_error","message":"llmtest: the summary request fails"}}`}
			}
			return llmtest.Reply{Thinking: "summing up", Text: fmt.Sprintf("<summary>## Goal\ncount\n## State\nstep %d of %d\n## Next\ngo on</summary>", step, steps)}
		}
		if need(r) > limit {
			return llmtest.Reply{Text: "refused anyway"}
		}
		step++
		if step > steps {
			return llmtest.Reply{Thinking: "all done", Text: "task finished"}
		}
		lines := 60 + (step*37)%300
		if step%7 == 0 {
			lines = 2500
		}
		return llmtest.Reply{
			Thinking:  fmt.Sprintf("step %d: the next command should count to %d", step, lines),
			ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 %d # step%d"}`, lines, step)}},
		}
	}
}

// TestLongTurnAppendOnly is the must-show run of issue 25: a 300-step
// single-turn headless run on a preserved-thinking model with thinking on
// (and on DeepSeek's thinking mode), against a fake that enforces every
// documented thinking rule, with a window small enough that the turn
// strips, drops and compacts at least three times each. It finishes, no
// request is refused (every one fits the window with its max_tokens, which
// both servers count in with thinking on, no thinking block fails its
// prefix check, and a rule's 400 would end the turn), and the layers acted
// inside the turn. The history is given the whole window, as the app
// gives it CONTEXT_WINDOW: its reserve (MAX_TOKENS) keeps the room for
// the reply.
func TestLongTurnAppendOnly(t *testing.T) {
	testenv.Slow(t)
	const steps, window = 300, 24000
	for _, format := range []string{"anthropic", "deepseek"} {
		t.Run(format, func(t *testing.T) {
			s := thinkingSession(t, format, history.Config{Window: window}, steps+10)
			// Four summaries of five fail: the turn backs off (1, 2, 4
			// and 8 steps) and drops meanwhile.
			s.srv.Handle(longTurn(steps, window, func(n int) bool { return n%5 != 0 }))
			s.srv.ContextLimit(window, nil)
			res, err := s.agent.Run(context.Background(), "count for me, 300 times", noteObs{&s.notes})
			if err != nil {
				t.Fatalf("the turn failed: %v\nnotices: %q", err, tail(s.notes, 8))
			}
			if res.Text != "task finished" || res.Steps != steps+1 {
				t.Errorf("turn ended after %d steps with %q, want %d steps and the final answer", res.Steps, res.Text, steps+1)
			}
			reqs := s.srv.Requests()
			refused := 0
			for i, r := range reqs {
				if need(r) > window || len(r.PrefixFailures) > 0 || r.Rejected != "" {
					refused++
					t.Errorf("request %d refused: %d tokens + max_tokens %d (window %d), prefix failures %v, %s", i, r.Tokens, r.MaxTokens, window, r.PrefixFailures, r.Rejected)
				}
				if r.MaxTokens != sessionMaxTokens {
					t.Errorf("request %d: max_tokens %d, want %d (the reserve holds it whole)", i, r.MaxTokens, sessionMaxTokens)
				}
			}
			st := s.hist.Stats()
			t.Logf("%d requests, %d refused, stats %+v", len(reqs), refused, st)
			if st.Strips < 3 || st.Drops < 3 || st.Compactions < 3 {
				t.Errorf("the turn did not strip, drop and compact at least three times each: %+v", st)
			}
			if st.Closes == 0 {
				t.Errorf("no edit closed a round: %+v", st)
			}
		})
	}
}

// need is what a request takes of the server's window: its prompt and the
// completion's reserve, which DeepSeek counts in and Anthropic does with
// thinking on (every request of thinkingSession thinks).
func need(r llmtest.Request) int {
	return r.Tokens + r.MaxTokens
}

func tail(s []string, n int) []string {
	return s[max(0, len(s)-n):]
}

// TestInTurnEditWithoutCloseIsRefused is the control: the same edit inside
// a tool loop with the round left open (the latest assistant message lost
// its thinking with the prefix it was bound to) is the 400 the issue
// reports, so the run above passes because of the close, not a lenient
// fake.
func TestInTurnEditWithoutCloseIsRefused(t *testing.T) {
	s := thinkingSession(t, "anthropic", history.Config{Window: 24000}, 20)
	s.srv.Handle(longTurn(3, 24000, func(int) bool { return false }))
	if _, err := s.agent.Run(context.Background(), "count", nil); err != nil {
		t.Fatal(err)
	}
	h := s.hist
	msgs := h.Messages()
	// Reopen a round: a call and its result after the answer would be
	// what a turn in progress holds; unthink from the first tool result.
	e := history.Edit{Layer: history.LayerStrip, Unthink: true, Blocks: []history.BlockEdit{{Message: 2, Block: 0, Content: "stub"}}}
	if msgs[2].Blocks[0].Type != llm.BlockToolResult {
		t.Fatalf("message 2 is %+v", msgs[2].Blocks[0])
	}
	// Take the answer back so the history ends inside the tool loop.
	if err := h.Apply(history.Edit{Layer: history.LayerRewind, Keep: len(msgs) - 1}); err != nil {
		t.Fatal(err)
	}
	if err := h.Apply(e); err != nil {
		t.Fatal(err)
	}
	req := s.agent.Request(context.Background())
	_, err := s.agent.Options().Provider.Stream(context.Background(), req, nil)
	if err == nil || !strings.Contains(err.Error(), "must start with a thinking block") {
		t.Fatalf("err = %v, want A1's 400", err)
	}
	// The same edit with the round closed is accepted.
	if err := h.Apply(history.Edit{Layer: history.LayerStrip, Unthink: true, Close: true, Blocks: []history.BlockEdit{{Message: 4, Block: 0, Content: "stub2"}}}); err != nil {
		t.Fatal(err)
	}
	req = s.agent.Request(context.Background())
	if _, err := s.agent.Options().Provider.Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("closed round refused: %v", err)
	}
}

// TestOverflowMidTurnKeepsThinkingRules: a server whose real limit is a
// quarter of CONTEXT_WINDOW refuses the turn twice in its middle (the
// second time when its limit falls lower still, to a fifth), on
// a preserved-thinking model and on DeepSeek's thinking mode. Each
// recovery edits history inside a tool loop; the retry and every request
// after it pass every thinking rule, and the turn finishes.
func TestOverflowMidTurnKeepsThinkingRules(t *testing.T) {
	testenv.Slow(t)
	const window = 40000
	for _, format := range []string{"anthropic", "deepseek"} {
		t.Run(format, func(t *testing.T) {
			s := thinkingSession(t, format, history.Config{Window: window, Cap: history.SeedCap}, 40)
			var mu sync.Mutex
			step, late := 0, 0
			s.srv.Handle(func(r llmtest.Request) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if isCompaction(r) {
					return llmtest.Reply{Thinking: "summing up", Text: "<summary>## Goal\ncount\n## State\nhalf way</summary>"}
				}
				if need(r) > window/4 {
					return llmtest.Reply{Text: "refused anyway"} // the server refused it
				}
				if lower := window / 5; step >= 8 && need(r) > lower {
					// From step 8 the server's real limit is lower still
					// than the one it stated before: a second overflow.
					late++
					body := fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":"input length and `+"`max_tokens`"+` exceed context limit: %d + %d > %d, decrease input length or `+"`max_tokens`"+` and try again"}}`, r.Tokens, r.MaxTokens, lower)
					if format == "deepseek" {
						body = fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, lower, need(r), r.Tokens, r.MaxTokens)
					}
					return llmtest.Reply{Status: 400, ErrorBody: body}
				}
				step++
				calls := 2
				switch {
				case step >= 12:
					return llmtest.Reply{Thinking: "done", Text: "task finished"}
				case step == 9:
					calls = 3 // a burst
				}
				var tc []llmtest.ToolCall
				for i := 0; i < calls; i++ {
					tc = append(tc, llmtest.ToolCall{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 1700 # step%d.%d"}`, step, i)})
				}
				return llmtest.Reply{Thinking: fmt.Sprintf("step %d", step), ToolCalls: tc}
			})
			s.srv.ContextLimit(window/4, nil)
			res, err := s.agent.Run(context.Background(), "count a lot, in steps", noteObs{&s.notes})
			if err != nil {
				t.Fatalf("the turn failed: %v\nnotices: %q", err, tail(s.notes, 8))
			}
			if res.Text != "task finished" {
				t.Errorf("final text %q", res.Text)
			}
			overflows := 0
			for i, r := range s.srv.Requests() {
				if len(r.PrefixFailures) > 0 {
					t.Errorf("request %d: thinking failed its prefix check: %v", i, r.PrefixFailures)
				}
				if need(r) > window/4 {
					overflows++
				}
			}
			overflows += late
			t.Logf("%d requests, %d overflows, stats %+v, window now %d", len(s.srv.Requests()), overflows, s.hist.Stats(), s.hist.Config().Window)
			if overflows < 2 {
				t.Errorf("%d overflows in the turn, want at least 2", overflows)
			}
		})
	}
}
