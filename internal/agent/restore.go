package agent

import (
	"encoding/json"
	"fmt"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// Restore replays a session log into h in the order the loop wrote it
// (messages appended, edits applied, usage observed), so the rebuilt history
// produces the same request bytes as before the stop. It returns the
// session's total usage. Sub-agent entries are counted but not replayed.
//
// A damaged log (see sessionlog.DamagedError) may have lost a message
// that a later edit counted on: an edit that no longer applies is skipped,
// the rest is replayed, and Restore returns the usage with a
// *SkippedEditsError, which the caller reports and goes on from
// (history.Repair then makes the tool rounds valid again).
func Restore(h *history.History, entries []sessionlog.Entry) (llm.Usage, error) {
	var total llm.Usage
	var skipped []error
	for i, e := range entries {
		switch e.Type {
		case sessionlog.TypeUsage:
			if e.Usage == nil {
				continue
			}
			total = total.Add(*e.Usage)
			if e.Agent == "" && e.Text != sessionlog.UsageCompact {
				h.Observe(*e.Usage)
			}
		case sessionlog.TypeMessage:
			if e.Agent != "" || e.Message == nil {
				continue
			}
			h.Append(*e.Message)
		case sessionlog.TypeEdit:
			if e.Agent != "" {
				continue
			}
			var ed history.Edit
			if err := json.Unmarshal(e.Edit, &ed); err != nil {
				skipped = append(skipped, fmt.Errorf("session entry %d: bad history edit: %w", i+1, err))
				continue
			}
			if err := h.Apply(ed); err != nil {
				skipped = append(skipped, fmt.Errorf("session entry %d: replaying a history edit: %w", i+1, err))
			}
		}
	}
	if len(skipped) > 0 {
		return total, &SkippedEditsError{Errs: skipped}
	}
	return total, nil
}

// SkippedEditsError lists the history edits Restore could not replay.
type SkippedEditsError struct{ Errs []error }

func (e *SkippedEditsError) Error() string {
	return fmt.Sprintf("%d history edit(s) of the log no longer apply (a damaged line lost what they edited) and were skipped; first: %v", len(e.Errs), e.Errs[0])
}

// LastReminder returns the reminder state the session last logged, so a
// resumed session reports the files changed while harness was not running.
func LastReminder(entries []sessionlog.Entry) (reminder.State, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type != sessionlog.TypeReminder || e.Agent != "" {
			continue
		}
		var st reminder.State
		if json.Unmarshal(e.Reminder, &st) == nil {
			return st, true
		}
	}
	return reminder.State{}, false
}
