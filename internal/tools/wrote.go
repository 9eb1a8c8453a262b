package tools

import (
	"context"
	"os"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox"
)

// CommandCheckpointer is a Checkpointer that is told, at a command's end,
// what the sandbox saw it ask to write (sandbox.Result.Wrote): a change
// elsewhere in its window is then someone else's (package checkpoint).
type CommandCheckpointer interface {
	BeginCommand(callID, tool string) (journal *os.File, end func(wrote []string, known bool, why string))
}

// wroteReport carries a bash call's write set from the tool to the
// registry, which hands it to the checkpointer once the call is done.
type wroteReport struct {
	// journal is the call's write journal, for the sandbox to write the
	// set into as the command runs (sandbox.Cmd.WriteJournal).
	journal *os.File
	mu      sync.Mutex
	set     bool
	paths   []string
	known   bool
	why     string
}

type wroteKey struct{}

func withWroteReport(ctx context.Context, journal *os.File) (context.Context, *wroteReport) {
	w := &wroteReport{journal: journal}
	return context.WithValue(ctx, wroteKey{}, w), w
}

// writeJournal is the call's write journal, nil when it has none.
func writeJournal(ctx context.Context) *os.File {
	if w, _ := ctx.Value(wroteKey{}).(*wroteReport); w != nil {
		return w.journal
	}
	return nil
}

// reportWrote records what a command of this call wrote; a second
// command in the same call adds to the set, and one unknown makes it
// unknown.
func reportWrote(ctx context.Context, res *sandbox.Result, unknownWhy string) {
	w, _ := ctx.Value(wroteKey{}).(*wroteReport)
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	known, why := res.WroteKnown, res.WroteWhy
	if unknownWhy != "" {
		known, why = false, unknownWhy
	}
	if !w.set {
		w.set, w.known, w.why = true, known, why
	} else if w.known && !known {
		w.known, w.why = false, why
	}
	w.paths = append(w.paths, res.Wrote...)
}

// result is the call's write set; a call that ran no command (it failed
// first, or started a background job) has none known, and nothing to say
// why.
func (w *wroteReport) result() ([]string, bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.set {
		return nil, false, ""
	}
	if !w.known {
		return nil, false, w.why
	}
	return w.paths, true, ""
}
