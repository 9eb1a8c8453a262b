package replay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/testenv"
)

// sharedTrajectories returns the shared mini-swe-agent directory, or skips.
func sharedTrajectories(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the package directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", "trajectories", "mini-swe-agent")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared trajectories missing at %s: the benchmark test needs them", p)
	}
	return p
}

// TestHarnessStrategyPays replays the shared trajectories and checks the
// targets the harness strategy is tuned to: no dearer than seed under both
// pricings while showing at least as much tool output, under the window at
// 32k and 128k, and a cache-read share above 90%.
func TestHarnessStrategyPays(t *testing.T) {
	testenv.Slow(t)
	trajs, err := Load([]string{sharedTrajectories(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, pricing := range []string{Anthropic, OpenAI} {
		for _, window := range []int{32000, 128000} {
			res, err := RunAll(context.Background(), trajs, []string{StrategyRaw, StrategySeed, history.StrategyHarness}, Options{Pricing: pricing, Window: window})
			if err != nil {
				t.Fatal(err)
			}
			by := map[string]Result{}
			for _, r := range res {
				by[r.Strategy] = r
				t.Logf("%s %d %-8s req %5d sent %9d read %5.1f%% cost %+6.1f%% visible %7.0f peak %6d compact %3d drops %3d",
					pricing, window, r.Strategy, r.Requests, r.TokensSent, 100*r.CacheReadShare, 100*(r.CostRatio-1),
					r.VisibleOutputChars, r.PeakContext, r.Compactions, r.Drops)
			}
			h, s := by[history.StrategyHarness], by[StrategySeed]
			if h.CostRatio > s.CostRatio {
				t.Errorf("%s %d: harness costs %.3f of raw, seed %.3f", pricing, window, h.CostRatio, s.CostRatio)
			}
			if h.VisibleOutputChars < s.VisibleOutputChars {
				t.Errorf("%s %d: harness shows %.0f output chars a request, seed %.0f", pricing, window, h.VisibleOutputChars, s.VisibleOutputChars)
			}
			if h.PeakContext >= window {
				t.Errorf("%s %d: harness peak context %d is over the window", pricing, window, h.PeakContext)
			}
			if h.CacheReadShare <= 0.9 {
				t.Errorf("%s %d: harness cache-read share %.3f, want over 0.9", pricing, window, h.CacheReadShare)
			}
		}
	}
}
