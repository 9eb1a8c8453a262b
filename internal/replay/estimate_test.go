package replay

import (
	"context"
	"math"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestEstimatorError measures harness's token accounting against the
// provider's real counts recorded in the shared trajectories: for every
// request after the first, the last reply's usage plus an estimate of the
// messages added since, against the prompt_tokens the provider reported.
// The error is logged (quoted in docs/measurements.md) and bounded loosely, so a
// broken estimator fails while the noise of real text does not.
func TestEstimatorError(t *testing.T) {
	trajs, err := Load([]string{sharedTrajectories(t)})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var sum, sumAbs, sumNaive, sumAbsNaive float64
	for _, tr := range trajs {
		h := history.New(history.Config{Strategy: Raw, Cap: 1 << 30, Window: 1 << 30, SpillDir: t.TempDir()})
		observed := false
		for i, m := range tr.Messages {
			if u, ok := tr.Usage[i]; ok && m.Role == llm.RoleAssistant {
				real := float64(u.Prompt())
				if observed && real > 0 {
					e := (float64(h.Tokens()) - real) / real
					sum += e
					sumAbs += math.Abs(e)
					naive := history.EstimateText(tr.System)
					for _, pm := range h.Messages() {
						naive += history.Estimate(pm)
					}
					en := (float64(naive) - real) / real
					sumNaive += en
					sumAbsNaive += math.Abs(en)
					n++
				}
				h.Observe(u)
				observed = true
			}
			h.Append(m)
		}
	}
	if n == 0 {
		t.Fatal("no recorded usage in the trajectories")
	}
	mean, meanAbs := 100*sum/float64(n), 100*sumAbs/float64(n)
	t.Logf("%d requests: accounting (last usage + estimate of what was added) error %+.2f%% mean, %.2f%% mean absolute", n, mean, meanAbs)
	t.Logf("whole-prompt estimate alone: %+.2f%% mean, %.2f%% mean absolute", 100*sumNaive/float64(n), 100*sumAbsNaive/float64(n))
	if meanAbs > 5 {
		t.Errorf("accounting is off by %.2f%% on average; the usage-anchored count should be within a few percent", meanAbs)
	}
}

// The append strategy and modelled thinking replay: the persisted reminder
// costs a fraction of the ephemeral one per request, modelled reasoning
// makes every request larger, and clearing old reasoning sends less.
func TestAppendStrategyAndThinking(t *testing.T) {
	testenv.Slow(t)
	all, err := Load([]string{sharedTrajectories(t)})
	if err != nil {
		t.Fatal(err)
	}
	trajs := all[:min(5, len(all))]
	ctx := context.Background()
	run := func(strategy string, tokens int, old string) Result {
		r, err := Run(ctx, trajs, strategy, Options{Pricing: Anthropic, Window: 128000, ThinkingTokens: tokens, OldThinking: old})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	harness, appendOnly := run(history.StrategyHarness, 0, ""), run(history.StrategyAppend, 0, "")
	if appendOnly.ReminderTokens <= 0 || appendOnly.ReminderTokens >= harness.ReminderTokens/4 {
		t.Errorf("reminder per request: append %.1f, harness %.1f tokens", appendOnly.ReminderTokens, harness.ReminderTokens)
	}
	keep, clear := run(history.StrategyAppend, 1000, ThinkingKeep), run(history.StrategyAppend, 1000, ThinkingClear)
	if keep.TokensSent <= appendOnly.TokensSent || clear.TokensSent >= keep.TokensSent {
		t.Errorf("tokens sent: none %d, keep %d, clear %d", appendOnly.TokensSent, keep.TokensSent, clear.TokensSent)
	}
}
