package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// The server-side clearing model: nothing is cleared under the trigger;
// over it, the oldest results go in one batch of at least clear_at_least
// tokens, the latest three are kept, a cleared result stays cleared (so
// the requests after a batch hit the cache again), and a batch that could
// not free clear_at_least is not applied.
func TestServerClearing(t *testing.T) {
	c := newServerClearing(10000) // trigger 5000 tokens, clear_at_least 2000
	var msgs []llm.Message
	add := func(chars int) {
		id := fmt.Sprintf("t%d", len(msgs))
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: []byte(`{}`)}}},
			llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: strings.Repeat("x", chars)}}})
	}
	cleared := func(view []llm.Message) (n int, lastKept bool) {
		var results []llm.Block
		for _, m := range view {
			for _, b := range m.Blocks {
				if b.Type == llm.BlockToolResult {
					results = append(results, b)
				}
			}
		}
		lastKept = true
		for i, b := range results {
			if b.Content == clearedPlaceholder {
				n++
				if i >= len(results)-3 {
					lastKept = false
				}
			}
		}
		return n, lastKept
	}
	tok := int(1000 * CharsPerToken) // 1000-token results
	for range 4 {
		add(tok)
	}
	if n, _ := cleared(c.apply(&llm.Request{Messages: msgs})); n != 0 || c.batches != 0 {
		t.Fatalf("under the trigger: %d cleared, %d batches", n, c.batches)
	}
	for range 3 {
		add(tok)
	}
	n, kept := cleared(c.apply(&llm.Request{Messages: msgs}))
	if c.batches != 1 || n < 2 || !kept {
		t.Fatalf("over the trigger: %d cleared in %d batches, latest three kept %v", n, c.batches, kept)
	}
	// The next request, one result longer, is under the trigger again in
	// the view: the same results cleared, no new batch.
	add(100)
	if n2, _ := cleared(c.apply(&llm.Request{Messages: msgs})); n2 != n || c.batches != 1 {
		t.Errorf("next request: %d cleared (was %d), %d batches", n2, n, c.batches)
	}
	// Over the trigger with only small old results to clear: not applied.
	small := newServerClearing(10000)
	var few []llm.Message
	msgs, few = nil, nil
	for range 40 {
		add(30 * 331 / 100)
	}
	few = append(few, msgs...)
	few = append(few, llm.Text(llm.RoleUser, strings.Repeat("y", 6000*331/100)))
	if n, _ := cleared(small.apply(&llm.Request{Messages: few})); n != 0 || small.batches != 0 {
		t.Errorf("a batch under clear_at_least was applied: %d cleared", n)
	}
}

// The server policy replays end to end and is costed beside the others.
func TestServerStrategyRuns(t *testing.T) {
	all, err := Load([]string{sharedTrajectories(t)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), all[:min(5, len(all))], StrategyServer, Options{Pricing: Anthropic, Window: 32000, ThinkingTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.PeakContext > 32000 || r.ReminderTokens <= 0 {
		t.Errorf("server replay: %+v", r)
	}
}
