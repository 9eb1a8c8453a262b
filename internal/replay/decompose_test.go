package replay

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

// The decomposition accounts for every dollar: by tier and by content it
// sums to the strategy's cost, under both pricings and at a window small
// enough to compact, and each kind of content the small trajectory holds
// shows up.
func TestDecompositionSumsToCost(t *testing.T) {
	trajs, err := Load([]string{filepath.Join("testdata", "small.traj.json")})
	if err != nil {
		t.Fatal(err)
	}
	for _, pricing := range []string{Anthropic, OpenAI} {
		for _, window := range []int{4096, 128000} {
			res, err := RunAll(context.Background(), trajs, Strategies, Options{Pricing: pricing, Window: window, Decompose: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				d := r.Decomposition
				if d == nil {
					t.Fatalf("%s %d %s: no decomposition", pricing, window, r.Strategy)
				}
				var tiers, contents float64
				for _, v := range d.Tier {
					tiers += v
				}
				for _, v := range d.Content {
					contents += v
				}
				if !near(d.Total, r.Cost) || !near(tiers, r.Cost) || !near(contents, r.Cost) {
					t.Errorf("%s %d %s: cost %.9f, total %.9f, tiers %.9f, contents %.9f", pricing, window, r.Strategy, r.Cost, d.Total, tiers, contents)
				}
				want := []string{ContentOldAssistantText, ContentLatestResult, ContentLatestAssistant, ContentLatestCall, ContentTask, ContentOldCalls, ContentFixed}
				// Raw and server never stub; append strips inside a turn
				// in batches, which this small trajectory fills only in
				// the large window (in the small one it compacts first).
				if r.Strategy != StrategyRaw && r.Strategy != StrategyServer && (r.Strategy != history.StrategyAppend || window >= 32000) {
					want = append(want, ContentOldResults)
				}
				for _, k := range want {
					if d.Content[k] <= 0 {
						t.Errorf("%s %d %s: nothing in %q: %v", pricing, window, r.Strategy, k, d.Content)
					}
				}
				if r.Compactions > 0 && d.Tier[TierSummary] <= 0 {
					t.Errorf("%s %d %s: %d compactions but no summary cost", pricing, window, r.Strategy, r.Compactions)
				}
				if pricing == OpenAI && d.Tier[TierCacheWrite] != 0 {
					t.Errorf("openai has no cache writes, got %v", d.Tier[TierCacheWrite])
				}
			}
		}
	}
}

// The floor keeps only what the model minimally needs, so it costs less
// than raw, holds no old assistant text (format-error feedback only while it
// is one of the last two messages), and its parts sum to its total.
func TestFloorIsBelowRaw(t *testing.T) {
	trajs, err := Load([]string{filepath.Join("testdata", "small.traj.json")})
	if err != nil {
		t.Fatal(err)
	}
	for _, pricing := range []string{Anthropic, OpenAI} {
		raw, err := Run(context.Background(), trajs, StrategyRaw, Options{Pricing: pricing, Window: 128000})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Floor(context.Background(), trajs, pricing)
		if err != nil {
			t.Fatal(err)
		}
		if f.Total <= 0 || f.Total >= raw.Cost {
			t.Errorf("%s: floor %.6f, raw %.6f", pricing, f.Total, raw.Cost)
		}
		if f.Content[ContentOldAssistantText] != 0 {
			t.Errorf("%s: the floor sends old assistant text: %v", pricing, f.Content)
		}
		var sum float64
		for _, v := range f.Content {
			sum += v
		}
		if !near(sum, f.Total) {
			t.Errorf("%s: floor parts %.9f, total %.9f", pricing, sum, f.Total)
		}
	}
}

// Floor messages: old calls are bare, old results are stubs, old assistant
// text and format-error feedback go, the task and the last two stay whole.
func TestFloorMessages(t *testing.T) {
	trajs, err := Load([]string{filepath.Join("testdata", "small.traj.json")})
	if err != nil {
		t.Fatal(err)
	}
	tr := trajs[0]
	task := taskText(tr)
	msgs := floorMessages(tr.Messages[:len(tr.Messages)-1], task)
	n := len(msgs)
	for i, m := range msgs {
		for _, b := range m.Blocks {
			if i >= n-2 {
				continue
			}
			switch {
			case b.Type == "tool_use" && string(b.Input) != "{}":
				t.Errorf("message %d: old call keeps input %s", i, b.Input)
			case b.Type == "tool_result" && len(b.Content) > FloorStub && (b.Layer != history.LayerStrip || !strings.HasPrefix(b.Content[FloorStub:], "\n[harness strip: ")):
				t.Errorf("message %d: old result of %d chars is not a stub: %q", i, len(b.Content), b.Content)
			case b.Type == "text" && b.Text != task:
				t.Errorf("message %d: %s text kept: %.40q", i, m.Role, b.Text)
			}
		}
	}
	if msgs[0].Blocks[0].Text != task {
		t.Errorf("the task is not first")
	}
	last := tr.Messages[len(tr.Messages)-2]
	if msgs[n-1].Blocks[0].Content != last.Blocks[0].Content {
		t.Errorf("the latest result was changed")
	}
	for i := 1; i < n; i++ {
		if msgs[i].Role == msgs[i-1].Role {
			t.Errorf("messages %d and %d are both %s", i-1, i, msgs[i].Role)
		}
	}
}
