package history

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// The harness strategy stubs a result only when the stub saves at least
// stubMinSaving of it; the reference stubs whenever the stub is shorter.
// Whatever the size, a result is stubbed at most once, however many strips
// follow, and a result left whole stays whole byte for byte.
func TestStubThreshold(t *testing.T) {
	for _, tc := range []struct {
		strategy Strategy
		chars    int
		stubbed  bool
	}{
		{Harness, 450, false}, // stub ~400 chars: saves ~11%
		{Harness, 600, false}, // saves ~33%
		{Harness, 700, true},  // saves ~43%
		{Harness, 5000, true},
		{seed, 450, true}, // the reference takes any saving
		{seed, 5000, true},
	} {
		h := session(t, Config{Strategy: tc.strategy}, 4, tc.chars)
		var edits []Edit
		for range 3 { // strip at three turn ends and in-turn passes
			edits = append(edits, h.EndTurn()...)
			edits = append(edits, h.Maintain()...)
		}
		touched := map[[2]int]int{}
		for _, e := range edits {
			for _, be := range e.Blocks {
				touched[[2]int{be.Message, be.Block}]++
			}
		}
		msgs := h.Messages()
		for i, m := range msgs {
			for j, b := range m.Blocks {
				if b.Type != llm.BlockToolResult {
					continue
				}
				old := i < len(msgs)-2
				if n := touched[[2]int{i, j}]; n > 1 {
					t.Errorf("%s %d: message %d stubbed %d times", tc.strategy.Name(), tc.chars, i, n)
				}
				want := old && tc.stubbed
				if got := b.Layer == LayerStrip; got != want {
					t.Errorf("%s %d: message %d stubbed %v, want %v", tc.strategy.Name(), tc.chars, i, got, want)
				}
				if !want && b.Content != strings.Repeat("x", tc.chars) {
					t.Errorf("%s %d: message %d changed though not stubbed", tc.strategy.Name(), tc.chars, i)
				}
				if want && float64(len(b.Content)) > (1-stubMinSaving)*float64(tc.chars) && tc.strategy == Harness {
					t.Errorf("%s %d: stub of %d chars saves under %.0f%%", tc.strategy.Name(), tc.chars, len(b.Content), 100*stubMinSaving)
				}
			}
		}
	}
}
