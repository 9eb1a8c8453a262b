package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

// turn is what one user turn counts across its steps.
type turn struct {
	res       *Result
	stops     int // times a Stop hook kept this turn going
	overflows int // context overflows recovered in a row
	truncated int // replies of this turn cut in the middle of a tool call
}

// userMessage is the user's prompt as sent: with what a UserPromptSubmit
// hook adds, and the images; or the Result of a prompt a hook blocked.
func (a *Agent) userMessage(ctx context.Context, prompt string, images []*llm.Image, obs Observer) (llm.Message, *Result) {
	user := llm.Text(llm.RoleUser, prompt)
	if a.o.Hooks != nil && a.o.Label == "" { // a sub-agent's task is not the user's prompt
		o := a.o.Hooks.Fire(ctx, extend.Event{Name: extend.UserPromptSubmit, Prompt: prompt})
		hookNotices(obs, o)
		if o.Block || o.Stop {
			why := o.Reason
			if o.Stop {
				why = join(why, o.StopReason)
			}
			return user, &Result{Text: "The prompt was blocked by a UserPromptSubmit hook: " + why, Blocked: true}
		}
		if o.Context != "" {
			user.Blocks = append(user.Blocks, llm.Block{Type: llm.BlockText, Text: o.Context})
		}
	}
	for _, img := range images {
		user.Blocks = append(user.Blocks, llm.ImageBlock(img))
	}
	return user, nil
}

// stream sends one request and accounts for its reply. A nil reply with
// no error is a context overflow recovered from: the step asks again.
func (a *Agent) stream(ctx context.Context, obs Observer, t *turn) (*llm.Request, *llm.Reply, error) {
	req, pending := a.request(ctx)
	sent := a.o.Ledger.Now()
	var partial strings.Builder // the reply's text so far, kept if the user interrupts
	notices := noticesTo(obs)
	reply, err := a.o.Provider.Stream(ctx, req, func(e llm.Event) {
		switch e.Type {
		case llm.EventText:
			partial.WriteString(e.Text)
		case llm.EventRetry:
			partial.Reset()
		}
		notices(e)
	})
	if err != nil {
		if ctx.Err() != nil {
			return req, nil, a.keepInterrupted(partial.String())
		}
		if llm.KindOf(err) == llm.ErrContextTooLong && t.overflows < maxOverflows {
			// Every overflow is recoverable: learn the real limit,
			// shrink by what overflowed, retry.
			t.overflows++
			if cerr := a.recoverOverflow(ctx, obs, err); cerr != nil {
				if logFailed(cerr) {
					return req, nil, cerr
				}
				return req, nil, fmt.Errorf("%w (and shrinking the history failed: %v)", err, cerr)
			}
			return req, nil, nil
		}
		return req, nil, err
	}
	t.overflows = 0
	a.commitReminder(pending)
	t.res.Steps++
	if err := a.noteDropped(reply, obs); err != nil {
		return req, nil, err
	}
	a.o.History.Observe(reply.Usage)
	a.addUsage(reply.Usage, true)
	if err := a.logUsage(reply.Usage); err != nil {
		return req, nil, err
	}
	if err := a.account(ledger.Call{Request: req, Reply: reply, Usage: reply.Usage, Start: sent, Purpose: ledger.PurposeStep}, obs); err != nil {
		return req, nil, err
	}
	return req, reply, nil
}

// take keeps a reply and does what it asks: ends the turn (done), or runs
// its tool calls, or tells the model its cut call was not run.
func (a *Agent) take(ctx context.Context, obs Observer, t *turn, req *llm.Request, reply *llm.Reply) (done bool, err error) {
	msg := reply.Message
	if len(msg.Blocks) == 0 {
		// An empty assistant message is rejected by some APIs on the
		// next request; keep the turn well-formed.
		msg = llm.Text(llm.RoleAssistant, "(no reply)")
	}
	calls := msg.ToolCalls()
	if reply.StopReason == llm.StopRefusal {
		return true, a.refused(obs, t, reply, msg)
	}
	cut := reply.StopReason == llm.StopMaxTokens && len(calls) > 0
	if cut {
		msg = dropCutInput(msg)
	}
	msg = storable(msg)
	if err := a.appendMessage(msg); err != nil {
		return true, err
	}
	obs.OnReply(reply)
	if cut {
		return false, a.cutCall(obs, t, req, reply, calls)
	}
	if len(calls) == 0 {
		if again, err := a.stopHookGoesOn(ctx, obs, t); again || err != nil {
			return err != nil, err
		}
		return true, a.finish(ctx, obs, t, reply, msg)
	}
	sctx, endStep := stepContext(ctx)
	results := llm.Message{Role: llm.RoleUser, Blocks: a.runTools(sctx, calls, obs)}
	endStep()
	a.persistReminder(ctx, &results, false)
	if err := a.appendMessage(results); err != nil {
		return true, err
	}
	if ctx.Err() != nil {
		return true, ErrInterrupted
	}
	return false, nil
}

// refused ends the turn on a refusal. The refused reply is not kept:
// re-sent, it steers every later request towards refusing again
// (Anthropic asks clients to drop it). A placeholder keeps roles
// alternating.
func (a *Agent) refused(obs Observer, t *turn, reply *llm.Reply, msg llm.Message) error {
	text := msg.PlainText()
	if err := a.appendMessage(llm.Text(llm.RoleAssistant, refusedPlaceholder)); err != nil {
		return err
	}
	obs.OnReply(reply)
	obs.OnNotice(notice.Info(notice.Refusal, "the model refused this request (stop reason refusal); its reply is not kept in the conversation, so later requests are not affected"))
	t.res.Text = text
	if t.res.Text == "" {
		t.res.Text = "The model declined this request."
	}
	return nil
}

// cutCall answers a reply cut in the middle of a tool call: the call is
// not run, the model is told to split the work, and a second cut in the
// turn raises the output limit.
func (a *Agent) cutCall(obs Observer, t *turn, req *llm.Request, reply *llm.Reply, calls []llm.Block) error {
	t.truncated++
	limit := reply.Usage.Output
	if limit <= 0 {
		limit = req.MaxTokens
	}
	results := cutResults(calls, limit)
	n := notice.Info(notice.CutToolCall, fmt.Sprintf("the reply was cut at %d output tokens in the middle of a %s call; it was not run, and the model was told to split the work", limit, calls[len(calls)-1].Name))
	n.Tool, n.Limit = calls[len(calls)-1].Name, limit
	obs.OnNotice(n)
	if t.truncated == 2 {
		a.raiseOutputLimit(a.o.MaxTokens, obs) // not the request's, which fitReply may have lowered
	}
	return a.appendMessage(llm.Message{Role: llm.RoleUser, Blocks: results})
}

// stopHookGoesOn asks the Stop (or SubagentStop) hooks whether the turn
// may end; a block sends their reason to the model and goes on.
func (a *Agent) stopHookGoesOn(ctx context.Context, obs Observer, t *turn) (bool, error) {
	if a.o.Hooks == nil || t.stops >= maxStopContinues {
		return false, nil
	}
	ev := extend.Stop
	if a.o.Label != "" {
		ev = extend.SubagentStop
	}
	o := a.o.Hooks.Fire(ctx, extend.Event{Name: ev, Active: t.stops > 0})
	hookNotices(obs, o)
	if !o.Block || o.Stop {
		return false, nil
	}
	t.stops++
	return true, a.appendMessage(llm.Text(llm.RoleUser, "[harness: a "+ev+" hook asks you to go on] "+o.Reason))
}

// finish ends the turn on a reply without tool calls.
func (a *Agent) finish(ctx context.Context, obs Observer, t *turn, reply *llm.Reply, msg llm.Message) error {
	t.res.Text = msg.PlainText()
	if reply.StopReason == llm.StopMaxTokens {
		obs.OnNotice(notice.Info(notice.MaxTokens, "the reply was cut at MAX_TOKENS; raise MAX_TOKENS or ask the model to continue"))
	}
	if err := a.fit(ctx, obs, history.Need{Trigger: history.TurnEnd}); err != nil {
		if logFailed(err) {
			return err
		}
		obs.OnNotice(compactFailed(err))
	}
	return nil
}
