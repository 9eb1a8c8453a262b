package agent

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/tools"
)

type nopObserver struct{}

func (nopObserver) OnEvent(llm.Event)                             {}
func (nopObserver) OnToolStart(llm.Block)                         {}
func (nopObserver) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (nopObserver) OnReply(*llm.Reply)                            {}
func (nopObserver) OnNotice(notice.Notice)                        {}

// guarded shields the loop from its observer: a display bug must not end a
// turn half-recorded. The first panic is reported once as a notice (itself
// guarded); the rest of the turn runs without that display call.
type guarded struct {
	obs      Observer
	reported atomic.Bool
}

func (g *guarded) catch() {
	if p := recover(); p != nil && g.reported.CompareAndSwap(false, true) {
		defer func() { _ = recover() }()
		n := notice.Warning(notice.DisplayError, fmt.Sprintf("display error (a harness bug; the session goes on): %v", p))
		n.Err = fmt.Sprint(p)
		g.obs.OnNotice(n)
	}
}

func (g *guarded) OnEvent(e llm.Event) {
	defer g.catch()
	g.obs.OnEvent(e)
}

func (g *guarded) OnToolStart(call llm.Block) {
	defer g.catch()
	g.obs.OnToolStart(call)
}

func (g *guarded) OnToolEnd(call, result llm.Block, d time.Duration) {
	defer g.catch()
	g.obs.OnToolEnd(call, result, d)
}

func (g *guarded) OnReply(r *llm.Reply) {
	defer g.catch()
	g.obs.OnReply(r)
}

func (g *guarded) OnNotice(n notice.Notice) {
	defer g.catch()
	g.obs.OnNotice(n)
}

func (g *guarded) OnLedger(r ledger.Record) {
	defer g.catch()
	if lo, ok := g.obs.(LedgerObserver); ok {
		lo.OnLedger(r)
	}
}

// OutputObserver is implemented by observers that show a running tool's
// output as it comes (the last lines of a long command).
type OutputObserver interface {
	OnToolOutput(call llm.Block, chunk string)
}

// withOutput gives ctx the tools' progress hook when the observer shows
// live output.
func (g *guarded) withOutput(ctx context.Context, call llm.Block) context.Context {
	o, ok := g.obs.(OutputObserver)
	if !ok {
		return ctx
	}
	return tools.WithProgress(ctx, func(chunk string) {
		defer g.catch()
		o.OnToolOutput(call, chunk)
	})
}
