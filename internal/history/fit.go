package history

import (
	"context"
	"fmt"

	"github.com/harness-dev/harness/internal/llm"
)

// Trigger is the moment Fit is asked at.
type Trigger int

const (
	// BeforeRequest: before each model request of a turn (the tool
	// results of the last step, or the user's prompt, are stored).
	BeforeRequest Trigger = iota
	// TurnEnd: the reply that ends the user's turn is stored.
	TurnEnd
	// Overflow: the provider refused the request built from the current
	// messages as too long (Need.Prompt and Need.Limit say what it stated).
	Overflow
	// Requested: the user asked for a compaction (/compact, Need.Focus).
	Requested
)

// Need is what Fit is asked to do.
type Need struct {
	Trigger Trigger
	// Prompt and Limit are, for Overflow, the prompt size and the limit
	// the provider's error stated (0 when it stated none).
	Prompt, Limit int
	// Focus is, for Requested, what the user wants the summary to keep.
	Focus string
}

// A Summariser writes the handoff summary that replaces the messages before
// keep (package compact, through the agent or the replay). It only writes:
// where the history is cut and how the kept messages change is Fit's.
type Summariser interface {
	Summarise(ctx context.Context, keep int, focus string) (llm.Block, error)
}

// SummaryError is a compaction that failed: the summariser's error, and
// when Fit tries again.
type SummaryError struct {
	Err       error
	RetryIn   int // steps before the next automatic attempt; 0 when none waits
	Requested bool
}

func (e *SummaryError) Error() string {
	if e.RetryIn > 0 {
		return fmt.Sprintf("%v (trying again in %d step(s))", e.Err, e.RetryIn)
	}
	return e.Err.Error()
}

func (e *SummaryError) Unwrap() error { return e.Err }

// maxCompactWait bounds the backoff of a failing compaction, in steps.
const maxCompactWait = 32

// Fit is the one place that decides how the history is edited so the next
// request fits: strip, drop, compact, squeeze, and under the append
// strategy unthink and close the open round. The agent and the replay ask
// it at the same moments and apply nothing themselves; the summariser only
// writes the summary. It returns the edits it applied, in order, for the
// session log (they are applied even when it also returns an error), and a
// *SummaryError when a compaction it needed failed.
//
//   - BeforeRequest: compact when the count is over CompactAt × Window
//     (unless a failed compaction is backing off), then the strategy's
//     strip and drop.
//   - TurnEnd: compact when over the budget.
//   - Overflow: learn the provider's limit (SetWindow, ObservePrompt), drop
//     down to CompactTo, compact when that is not enough, and cut the
//     latest output when it alone does not fit (Squeeze).
//   - Requested: compact now.
func (h *History) Fit(ctx context.Context, n Need, s Summariser) ([]Edit, error) {
	switch n.Trigger {
	case Requested:
		return h.summarise(ctx, s, n.Focus, true)
	case TurnEnd:
		return h.autoCompact(ctx, s)
	case Overflow:
		return h.overflow(ctx, n, s)
	}
	edits, err := h.autoCompact(ctx, s)
	edits = append(edits, h.Maintain()...)
	if h.Tokens() > h.cfg.Window*19/20 {
		// Nothing older is left to drop or summarise and the latest
		// output alone does not fit: cut it rather than be refused.
		edits = append(edits, h.Squeeze(h.cfg.Window*9/10)...)
	}
	return edits, err
}

// autoCompact compacts when NeedsCompact, after any backoff.
func (h *History) autoCompact(ctx context.Context, s Summariser) ([]Edit, error) {
	if h.compactSkip > 0 {
		h.compactSkip-- // the backoff counts steps, due or not
		return nil, nil
	}
	if !h.NeedsCompact() || !h.worthSummary() {
		return nil, nil
	}
	return h.summarise(ctx, s, "", false)
}

// worthSummary reports whether a compaction now would replace at least a
// tenth of the messages after the last summary: one that replaces less
// costs a summary call and still leaves the count over the budget (the
// latest output is what is big), which the drop and the squeeze handle.
func (h *History) worthSummary() bool {
	after := h.TokensFrom(h.floor + 1)
	return after-h.TokensFrom(h.compactKeep()) >= max(1, after/10)
}

// summarise asks s for the summary of what a compaction replaces and
// applies it. A failed automatic compaction backs off: the next attempts
// wait 1, 2, 4… steps, so a provider that cannot summarise is not asked
// again every step.
func (h *History) summarise(ctx context.Context, s Summariser, focus string, requested bool) ([]Edit, error) {
	keep := h.compactKeep()
	block, err := s.Summarise(ctx, keep, focus)
	if err != nil {
		se := &SummaryError{Err: err, Requested: requested}
		if !requested {
			h.compactWait = min(max(1, h.compactWait*2), maxCompactWait)
			h.compactSkip = h.compactWait
			se.RetryIn = h.compactWait
		}
		return nil, se
	}
	h.compactWait, h.compactSkip = 0, 0
	e := h.SummaryEdit(keep, block)
	if err := h.Apply(e); err != nil {
		return nil, fmt.Errorf("applying the compaction: %w", err)
	}
	return []Edit{e}, nil
}

// compactKeep is the first message a compaction keeps: recent messages
// worth COMPACT_TO of the window, but never more than half of the messages
// there are, so a /compact the user asks for early still shrinks the
// conversation.
func (h *History) compactKeep() int {
	return h.KeepFrom(min(int(h.cfg.CompactTo*float64(h.cfg.Window)), h.MessageTokens()/2))
}

// CompactKeep is where a compaction made now would cut (see KeepFrom).
func (h *History) CompactKeep() int { return h.compactKeep() }

// SummaryEdit is the compaction that keeps the messages from keep on after
// summary. Under the append strategy it removes the reasoning of the kept
// messages (their prefix changed) and closes the open round, so a
// compaction in the middle of a turn leaves a valid request.
func (h *History) SummaryEdit(keep int, summary llm.Block) Edit {
	summary.Layer = LayerSummary
	return Edit{Layer: LayerSummary, Keep: keep, Summary: &summary, Unthink: h.appendOnly(), Close: h.appendOnly()}
}

// overflow recovers from a provider's "context too long": the count was
// wrong or the window is smaller than configured.
func (h *History) overflow(ctx context.Context, n Need, s Summariser) ([]Edit, error) {
	if n.Prompt > 0 {
		h.ObservePrompt(n.Prompt)
	}
	failing := max(n.Prompt, h.Tokens())
	win := h.cfg.Window
	switch {
	case n.Limit > 0:
		win = min(win, n.Limit)
	case failing*9/10 >= minWindow:
		// No stated limit: it is below what just failed (a smaller
		// request failing is a misread count, not a window to learn).
		win = min(win, failing*9/10)
	}
	h.SetWindow(win)
	edits := h.ForceDrop()
	var err error
	if len(edits) == 0 || h.NeedsCompact() {
		var more []Edit
		more, err = h.summarise(ctx, s, "", false)
		edits = append(edits, more...)
	}
	// What overflowed may be the latest tool output itself, which neither
	// a drop nor a summary touches: cut it to fit.
	if sq := h.Squeeze(h.cfg.Window * 9 / 10); len(sq) > 0 {
		edits = append(edits, sq...)
		err = nil
	}
	if err != nil && len(edits) > 0 && h.Tokens() <= h.cfg.Window*9/10 {
		// The summary failed (it backs off) but the drop made the
		// request fit: retry it rather than end the turn.
		err = nil
	}
	return edits, err
}

// minWindow is the least a window is lowered to from a failing request's
// size alone.
const minWindow = 4096
