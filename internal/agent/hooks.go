package agent

import (
	"context"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

// Hooks runs the user's hooks for an event (extend.Hooks, with the
// session's mode added by package app).
type Hooks interface {
	Fire(ctx context.Context, ev extend.Event) extend.Outcome
}

// maxStopContinues bounds how often Stop hooks may keep one turn going.
const maxStopContinues = 8

// runHooked runs one call between its PreToolUse and PostToolUse hooks. A
// hook that blocks the call gives the model its reason as the result; one
// that allows or asks tells the permission gate through the context.
func (a *Agent) runHooked(ctx context.Context, call llm.Block, obs Observer) (llm.Block, bool) {
	if a.o.Hooks == nil {
		return a.o.Tools.Run(ctx, call), true
	}
	o := a.o.Hooks.Fire(ctx, extend.Event{Name: extend.PreToolUse, Tool: call.Name, Input: call.Input, ToolUseID: call.ID})
	hookNotices(obs, o)
	if o.Block || o.Stop {
		why := o.Reason
		if o.Stop {
			why = join(why, o.StopReason)
		}
		return llm.Block{Type: llm.BlockToolResult, ToolUseID: call.ID, IsError: true,
			Content: "Not run: a PreToolUse hook blocked this call: " + why}, false
	}
	run := call
	if o.Input != nil {
		run.Input = extend.HarnessInput(o.Input)
	}
	res := a.o.Tools.Run(extend.WithPermission(ctx, o.Permission), run)
	post := a.o.Hooks.Fire(ctx, extend.Event{Name: extend.PostToolUse, Tool: call.Name, Input: run.Input, ToolUseID: call.ID,
		Result: &extend.ToolResult{Content: res.Content, IsError: res.IsError}})
	hookNotices(obs, post)
	if o.Context != "" {
		res.Content += "\n[PreToolUse hook] " + o.Context
	}
	if fb := join(post.Feedback, post.Context); fb != "" {
		res.Content += "\n[PostToolUse hook] " + fb
	}
	return res, true
}

func hookNotices(obs Observer, o extend.Outcome) {
	for _, n := range o.Notices {
		obs.OnNotice(notice.Warning(notice.Hook, n))
	}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
