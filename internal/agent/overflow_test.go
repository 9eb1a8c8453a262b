package agent_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

var stepTag = regexp.MustCompile(`# step(\d+)`)

// lastStep is the step tag of the latest tool call in msgs, -1 for none.
func lastStep(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].Blocks {
			if b.Type == llm.BlockToolUse {
				if m := stepTag.FindSubmatch(b.Input); m != nil {
					n, _ := strconv.Atoi(string(m[1]))
					return n
				}
			}
		}
	}
	return -1
}

// TestOverflowAlwaysRecovers is a user with the 128k-style default against
// a server whose real limit is a quarter of CONTEXT_WINDOW, in both wire
// formats: the turn overflows twice (the second time because one step's
// output is larger than the estimate allowed for) and finishes its task
// anyway; the learned window is said once; /compact works afterwards.
func TestOverflowAlwaysRecovers(t *testing.T) {
	testenv.Slow(t)
	const window = 40000
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			s := newSession40(t, format, history.Config{Window: window, Cap: history.SeedCap}, false, func(r llmtest.Request) llmtest.Reply {
				if isCompaction(r) {
					return llmtest.Reply{Text: "<summary>## Goal\ncount\n## State\nhalf way</summary>"}
				}
				step := lastStep(r.Messages) + 1
				calls := 2
				switch {
				case step >= 10:
					return llmtest.Reply{Text: "task finished"}
				case step == 8:
					calls = 3 // a burst: the estimate of it is short by a quarter
				}
				var tc []llmtest.ToolCall
				for i := 0; i < calls; i++ {
					tc = append(tc, llmtest.ToolCall{Name: "bash", Input: fmt.Sprintf(`{"command":"seq 1 1700 # step%d"}`, step)})
				}
				return llmtest.Reply{ToolCalls: tc}
			})
			// (the cap is 10,000 so the outputs reach the history whole and
			// the burst at step 8 overflows)
			limit := window / 4
			if format == "anthropic" {
				// claude-sonnet-5-5 always thinks, so the server counts the
				// adapter's max_tokens in: the window is larger by that,
				// and what the prompt may take is still a quarter of
				// CONTEXT_WINDOW.
				limit += anthropic.DefaultMaxTokens
			}
			s.srv.ContextLimit(limit, nil)
			obs := noteObs{&s.notes}
			res, err := s.agent.Run(context.Background(), "count a lot, in steps", obs)
			if err != nil {
				for i, r := range s.srv.Requests() {
					last := r.Messages[len(r.Messages)-1]
					txt := last.PlainText()
					if len(txt) > 80 {
						txt = txt[:80]
					}
					t.Logf("req %d tokens %d msgs %d compaction %v last %q", i, r.Tokens, len(r.Messages), isCompaction(r), txt)
				}
				t.Fatalf("the turn failed: %v\nnotices: %q", err, s.notes)
			}
			if res.Text != "task finished" {
				t.Errorf("final text %q", res.Text)
			}
			overflows := 0
			for _, r := range s.srv.Requests() {
				if r.Tokens > window/4 {
					overflows++
				}
			}
			told := 0
			for _, n := range s.notes {
				if strings.Contains(n, "below CONTEXT_WINDOW") {
					told++
				}
			}
			t.Logf("%d requests, %d overflows, stats %+v, window now %d", len(s.srv.Requests()), overflows, s.hist.Stats(), s.hist.Config().Window)
			// The burst at step 8 used to overflow a second time; the
			// learned window now has it cut before it is sent (history.Fit
			// squeezes a request that would not fit).
			if overflows < 1 {
				t.Errorf("%d overflows in the turn, want at least 1", overflows)
			}
			for i, r := range s.srv.Requests()[1:] {
				if r.Tokens > window/4 && i > 6 {
					t.Errorf("request %d over the learned window: %d tokens", i+1, r.Tokens)
				}
			}
			if told != 1 {
				t.Errorf("the lowered window was said %d times, want once: %q", told, s.notes)
			}
			if w := s.hist.Config().Window; w > window/4 {
				t.Errorf("working window %d, want at most the server's %d", w, window/4)
			}
			if err := s.agent.Compact(context.Background(), "", obs); err != nil {
				t.Errorf("/compact after the overflows: %v", err)
			}
			if _, err := s.agent.Run(context.Background(), "and continue", obs); err != nil {
				t.Errorf("the session cannot be continued: %v", err)
			}
		})
	}
}
