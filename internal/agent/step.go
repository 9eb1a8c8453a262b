package agent

import (
	"context"
	"sync"
)

// StepStop lets the user stop the step that runs now (the tool calls of
// one reply, their hooks included) without stopping the turn: the calls
// end, their results tell the model the user stopped them, and the turn
// goes on with the model's next reply. The chat's Esc uses it; Ctrl-C
// cancels the turn's context instead. A step with nothing to stop (the
// model is replying) reports false, and the caller stops the turn.
type StepStop struct {
	mu     sync.Mutex
	cancel context.CancelCauseFunc
}

// errStepStopped is the cause of a step's context the user stopped.
var errStepStopped = stepStopped{}

type stepStopped struct{}

func (stepStopped) Error() string { return "the user stopped this step" }

// Stop stops the running step, if any, and reports whether there was one.
func (s *StepStop) Stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel(errStepStopped)
	s.cancel = nil
	return true
}

// begin gives the step its own context, which Stop cancels; end must be
// called when the step is over.
func (s *StepStop) begin(ctx context.Context) (sctx context.Context, end func()) {
	sctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	return sctx, func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel(nil)
	}
}

type stepKey struct{}

// WithStepStop returns ctx carrying s: a turn run with it can have its
// steps stopped one by one.
func WithStepStop(ctx context.Context, s *StepStop) context.Context {
	return context.WithValue(ctx, stepKey{}, s)
}

// stepContext is the context the tool calls of one step run with: the
// turn's own, or one the user can stop alone when the turn carries a
// StepStop.
func stepContext(ctx context.Context) (context.Context, func()) {
	s, _ := ctx.Value(stepKey{}).(*StepStop)
	if s == nil {
		return ctx, func() {}
	}
	return s.begin(ctx)
}

// stepWasStopped reports whether sctx, a step's context, was stopped by
// the user while the turn's goes on.
func stepWasStopped(sctx context.Context) bool {
	return context.Cause(sctx) == errStepStopped
}
