package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// DeepSeek's context cache stores prefix units that end at the end of each
// user input and model output, and hits only on a unit matched in full
// (api-docs.deepseek.com/guides/kv_cache). So every message a request sends
// must come back byte for byte in the next one: the reminder cannot be an
// ephemeral tail that the next request removes. Through the real loop and
// the real OpenAI-format adapter (DeepSeek profile, thinking mode enforced
// by the fake), the append-only contract sends each request as the
// previous one's messages plus new ones, the reminder persisted inside
// them; the control, today's ephemeral reminder, breaks the last unit of
// every request.
func TestDeepSeekReminderOutsidePrefixUnits(t *testing.T) {
	run := func(t *testing.T, cfg history.Config, appendOnly bool) (broken, pairs int, persisted bool) {
		s := newSession40(t, "deepseek", cfg, appendOnly, func(r llmtest.Request) llmtest.Reply {
			if n := stepsInTurn(r.Messages); n < 3 {
				return llmtest.Reply{Thinking: fmt.Sprintf("step %d", n), ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo hi"}`}}}
			}
			return llmtest.Reply{Text: "done"}
		})
		s.srv.SetModes(llmtest.DeepSeekThinking)
		for turn := 1; turn <= 3; turn++ {
			if _, err := s.agent.Run(context.Background(), fmt.Sprintf("turn %d", turn), noteObs{&s.notes}); err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
		}
		reqs := s.srv.Requests()
		for i := 1; i < len(reqs); i++ {
			prev, cur := wireMessages(t, reqs[i-1].Body), wireMessages(t, reqs[i].Body)
			pairs++
			if len(cur) < len(prev) {
				broken++
				continue
			}
			for k := range prev {
				if !bytes.Equal(prev[k], cur[k]) {
					broken++
					t.Logf("request %d changes message %d of %d:\n%s\n%s", i, k, len(prev), prev[k], cur[k])
					break
				}
			}
		}
		last := wireMessages(t, reqs[len(reqs)-1].Body)
		for _, m := range last[:len(last)-1] {
			if bytes.Contains(m, []byte("<context>")) || bytes.Contains(m, []byte("\\u003ccontext\\u003e")) {
				persisted = true
			}
		}
		return broken, pairs, persisted
	}
	t.Run("append-only", func(t *testing.T) {
		broken, pairs, persisted := run(t, history.Config{Strategy: history.Append}, true)
		if pairs < 8 || broken != 0 {
			t.Errorf("%d of %d requests changed a unit the previous one sent", broken, pairs)
		}
		if !persisted {
			t.Error("the reminder is not kept in the history the next request sends")
		}
	})
	t.Run("control: ephemeral reminder", func(t *testing.T) {
		broken, pairs, _ := run(t, history.Config{Strategy: history.Harness}, false)
		if broken < pairs/2 {
			t.Errorf("only %d of %d requests broke a unit; the control no longer shows the defect", broken, pairs)
		}
	})
}

// wireMessages returns an OpenAI-format body's messages, each as sent.
func wireMessages(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var b struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Messages
}
