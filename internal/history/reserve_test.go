package history

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// The reply's reserve comes off the window the layers keep the prompt
// under: all of max_tokens, but never more than half the window. A history
// built from Config (a sub-agent's) works with the same window, a raised
// output limit shrinks it, and ReplyRoom is what the prompt leaves.
func TestReserve(t *testing.T) {
	for _, tc := range []struct {
		window, maxTokens, reserve int
	}{
		{128000, 16384, 16384},
		{200000, 64000, 64000},
		{24000, 2048, 2048},
		{20000, 16384, 10000}, // over half the window: half
		{1024, 16384, 512},
		{128000, 0, 0},
	} {
		h := New(Config{Window: tc.window, Reserve: tc.maxTokens})
		if h.Reserve() != tc.reserve || h.Config().Window != tc.window-tc.reserve {
			t.Errorf("window %d, max_tokens %d: reserve %d, working window %d; want %d and %d",
				tc.window, tc.maxTokens, h.Reserve(), h.Config().Window, tc.reserve, tc.window-tc.reserve)
		}
		if sub := New(h.Config()); sub.Config().Window != h.Config().Window {
			t.Errorf("a history built from Config works with %d tokens, not %d", sub.Config().Window, h.Config().Window)
		}
		if got, want := h.ReplyRoom(), tc.window-tc.window/20; got != want { // nothing estimated yet
			t.Errorf("empty history: reply room %d, want the window less its slack, %d", got, want)
		}
	}

	h := New(Config{Window: 128000, Reserve: 16384})
	h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: strings.Repeat("word ", 4000)}}})
	// Nothing counted yet: half the estimate is kept for its error.
	if got, want := h.ReplyRoom(), 128000-h.Tokens()-6400-h.Tokens()/2; got != want {
		t.Errorf("reply room %d, want %d", got, want)
	}
	h.Observe(llm.Usage{Input: h.Tokens() + 100})
	if got, want := h.ReplyRoom(), 128000-h.Tokens()-6400; got != want {
		t.Errorf("after a usage: reply room %d, want %d", got, want)
	}
	h.SetReserve(32768)
	if h.Reserve() != 32768 || h.Config().Window != 128000-32768 {
		t.Errorf("raised to 32768: reserve %d, window %d", h.Reserve(), h.Config().Window)
	}
	h.SetReserve(200000)
	if h.Reserve() != 64000 || h.Config().Window != 64000 {
		t.Errorf("raised past half the window: reserve %d, window %d", h.Reserve(), h.Config().Window)
	}
	// A learned limit lowers the working window; the reserve stays.
	h.SetWindow(50000)
	if h.Config().Window != 50000 || h.ReplyRoom() != 114000-h.Tokens()-114000/20 {
		t.Errorf("learned limit: window %d, room %d", h.Config().Window, h.ReplyRoom())
	}

	// Without a reserve (the benchmark, tests) none is ever added.
	none := New(Config{Window: 128000})
	none.SetReserve(32768)
	if none.Reserve() != 0 || none.Config().Window != 128000 {
		t.Errorf("no reserve asked: reserve %d, window %d", none.Reserve(), none.Config().Window)
	}
}

// The layers act on the working window: a prompt that fits the whole
// window but not with the reply's reserve is compacted for.
func TestReserveMovesTheBudget(t *testing.T) {
	with := New(Config{Window: 40000, Reserve: 8000})
	without := New(Config{Window: 40000})
	for _, h := range []*History{with, without} {
		h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: strings.Repeat("abcd ", 24000)}}})
	}
	// About 30,000 tokens: over 0.85 × 32,000, under 0.85 × 40,000.
	if n := with.Tokens(); n < 27200 || n > 34000 {
		t.Fatalf("prompt of %d tokens: the test's numbers are off", n)
	}
	if !with.NeedsCompact() || without.NeedsCompact() {
		t.Errorf("needs compact: with reserve %v, without %v; want true, false", with.NeedsCompact(), without.NeedsCompact())
	}
}
