package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// DefaultMaxSteps bounds one turn: generous for real work, finite for a
// model stuck in a loop.
const DefaultMaxSteps = 200

// Observer receives what happens during a turn, for display.
type Observer interface {
	OnEvent(e llm.Event)
	OnToolStart(call llm.Block)
	OnToolEnd(call llm.Block, result llm.Block, elapsed time.Duration)
	OnReply(r *llm.Reply)
	OnNotice(n notice.Notice)
}

// Options configure an Agent.
type Options struct {
	Provider  llm.Provider
	Model     string
	System    string
	Tools     *tools.Registry
	History   *history.History
	Log       *sessionlog.Log   // nil: nothing is recorded
	Reminder  *reminder.Builder // nil: no late injection
	Todos     func() string     // rendered plan for the reminder; nil or "" when none
	MaxSteps  int
	MaxTokens int
	SessionID string
	Label     string // names a sub-agent in the log; "" for the main agent

	// Thinking is sent with every request (THINKING, EFFORT).
	Thinking llm.Thinking

	// AppendOnly is the contract for models that check what they are sent
	// (llm.AppendOnly: preserved-thinking models, DeepSeek): every
	// assistant turn goes back as received, system and tools are built
	// once, and the reminder is the persisted Delta form, stored at the
	// end of the user's message and never changed. History should use
	// history.Append so its layers edit only at turn boundaries.
	AppendOnly bool

	// OnReminder, when set, is called with the reminder's committed state
	// each time the files it knows change, so the session log can carry
	// it across a resume.
	OnReminder func(reminder.State)
	// Ready, when set, runs before each turn's first request and may
	// still add tools and set the system prompt (SetSystem): what can
	// only be listed once something started beside the session (MCP
	// servers, eager tools). An error ends the turn before its prompt is
	// recorded.
	Ready func(ctx context.Context) error

	// Ledger, when set, accounts every request (tokens by tier and kind,
	// dollars, the reasons for a cost) and each record is logged. Shared
	// by the sub-agents and kept across /model.
	Ledger *ledger.Book

	// Hooks, when set, are fired at the loop's points (package extend):
	// UserPromptSubmit before the prompt is stored, PreToolUse and
	// PostToolUse around each call, Stop (SubagentStop for a sub-agent)
	// when a reply asks for no tools.
	Hooks Hooks
}

// Agent runs turns of one conversation. It is not safe for concurrent Runs.
type Agent struct {
	o Options

	mu    sync.Mutex
	usage llm.Usage // whole session, sub-agents included
	last  llm.Usage // the last request's usage

	// outputRaised is set once raiseOutputLimit has raised MaxTokens.
	outputRaised bool

	// capMu serialises the cap layer: concurrent tool calls (sub-agents)
	// finish side by side, and History is not safe for concurrent use.
	capMu sync.Mutex

	specs []llm.Tool // AppendOnly: the tools as first sent

	dropped *compact.Dropped // what the latest compaction removed

	toldWindow bool            // the lowered window was announced
	lastFiles  map[string]bool // reminder files last reported to OnReminder
}

// maxOverflows bounds the context-too-long recoveries in a row without a
// reply: each one lowers the window or shrinks the history, so a few
// suffice; a server that refuses everything must still end the turn.
const maxOverflows = 6

// New returns an Agent.
func New(o Options) *Agent {
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	return &Agent{o: o}
}

// Result is the outcome of one turn.
type Result struct {
	Text         string
	Steps        int
	Usage        llm.Usage // this turn, sub-agents included
	HitStepLimit bool
	// Blocked is set when a UserPromptSubmit hook refused the prompt (or
	// a hook stopped the turn): Text says why, and nothing was stored.
	Blocked bool
	// Ledger is this turn's cost ledger (zero without Options.Ledger).
	Ledger ledger.Summary
}

// ErrInterrupted is returned when the turn's context was cancelled. What
// completed before the interruption is kept.
var ErrInterrupted = errors.New("interrupted")

// Run runs one user turn to completion.
func (a *Agent) Run(ctx context.Context, prompt string, obs Observer) (*Result, error) {
	return a.RunWithImages(ctx, prompt, nil, obs)
}

// RunWithImages runs one user turn whose prompt carries images (pasted,
// @image.png, --image), sent after the text.
func (a *Agent) RunWithImages(ctx context.Context, prompt string, images []*llm.Image, obs Observer) (*Result, error) {
	if obs == nil {
		obs = nopObserver{}
	}
	obs = &guarded{obs: obs}
	before := a.Usage()
	booked := 0
	if a.o.Ledger != nil {
		if a.o.Label == "" {
			a.o.Ledger.StartTurn()
		}
		booked = a.o.Ledger.Len()
	}
	res, err := a.run(ctx, prompt, images, obs)
	if res != nil {
		res.Usage = diff(a.Usage(), before)
		if a.o.Ledger != nil {
			res.Ledger = a.o.Ledger.Since(booked)
		}
	}
	for _, e := range a.o.History.EndTurn() {
		if lerr := a.logEdit(e); lerr != nil && err == nil {
			err = lerr
		}
	}
	return res, err
}

func (a *Agent) run(ctx context.Context, prompt string, images []*llm.Image, obs Observer) (*Result, error) {
	if a.o.Ready != nil {
		if err := a.o.Ready(ctx); err != nil {
			return &Result{}, err
		}
	}
	user, blocked := a.userMessage(ctx, prompt, images, obs)
	if blocked != nil {
		return blocked, nil
	}
	a.persistReminder(ctx, &user, true)
	if err := a.appendMessage(user); err != nil {
		return nil, err
	}
	t := &turn{res: &Result{}}
	for t.res.Steps < a.o.MaxSteps {
		if err := a.fit(ctx, obs, history.Need{Trigger: history.BeforeRequest}); err != nil {
			if logFailed(err) {
				return t.res, err
			}
			obs.OnNotice(compactFailed(err))
		}
		req, reply, err := a.stream(ctx, obs, t)
		if err != nil {
			return t.res, err
		}
		if reply == nil {
			continue // an overflow, recovered: ask again
		}
		done, err := a.take(ctx, obs, t, req, reply)
		if done || err != nil {
			return t.res, err
		}
	}
	t.res.HitStepLimit = true
	t.res.Text = fmt.Sprintf("Stopped after %d steps (the step limit) without a final answer. Send a message to continue.", a.o.MaxSteps)
	return t.res, nil
}

// InterruptedReply ends what was kept of a reply the user interrupted, so
// the model knows its text stops there and why.
const InterruptedReply = "[the user interrupted this reply here]"

// keepInterrupted records the text a reply had streamed when the user
// interrupted it (what the user saw stays in the conversation, marked as
// cut), or a note that it was interrupted before any text, so the model is
// told either way. It returns ErrInterrupted, or the log's error.
func (a *Agent) keepInterrupted(text string) error {
	text = strings.TrimRight(text, " \n")
	if text == "" {
		text = "(no text yet)"
	}
	if err := a.appendMessage(llm.Text(llm.RoleAssistant, text+"\n\n"+InterruptedReply)); err != nil {
		return err
	}
	return ErrInterrupted
}

// persistReminder adds the Delta reminder to a user message about to be
// stored (AppendOnly): a text block after the prompt or the tool results,
// marked as harness's, committed at once because the stored block is what
// the model will see. Nothing changed: no block.
func (a *Agent) persistReminder(ctx context.Context, m *llm.Message, turnStart bool) {
	if !a.o.AppendOnly || a.o.Reminder == nil {
		return
	}
	p := a.o.Reminder.Prepare(ctx, a.todos(), reminder.Delta, turnStart)
	if p.Text != "" {
		m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockText, Text: p.Text, Layer: history.LayerReminder})
	}
	a.commitReminder(p)
}

// commitReminder commits a reminder that reached the model and reports
// the state when the files it knows changed.
func (a *Agent) commitReminder(p *reminder.Pending) {
	if p == nil {
		return
	}
	p.Commit()
	if a.o.OnReminder == nil {
		return
	}
	st := a.o.Reminder.State()
	files := make(map[string]bool, len(st.Files))
	same := len(st.Files) == len(a.lastFiles)
	for k, v := range st.Files {
		files[k+"\x00"+v] = true
		if !a.lastFiles[k+"\x00"+v] {
			same = false
		}
	}
	if !same {
		a.lastFiles = files
		a.o.OnReminder(st)
	}
}

func (a *Agent) todos() string {
	if a.o.Todos == nil {
		return ""
	}
	return a.o.Todos()
}

// storable returns m with every tool call's input a JSON object. A model can
// send malformed arguments; the tool is still run with the raw text (and
// answers that it is invalid), but the stored and re-sent call must be valid
// JSON, or the log could not hold it and the provider would reject the next
// request.
func storable(m llm.Message) llm.Message {
	var out *llm.Message
	for i, b := range m.Blocks {
		if b.Type != llm.BlockToolUse || isObject(b.Input) {
			continue
		}
		if out == nil {
			out = &llm.Message{Role: m.Role, Blocks: append([]llm.Block(nil), m.Blocks...)}
		}
		raw := json.RawMessage("{}")
		if len(b.Input) > 0 {
			raw, _ = json.Marshal(map[string]string{"invalid_json_arguments": string(b.Input)})
		}
		out.Blocks[i].Input = raw
	}
	if out == nil {
		return m
	}
	return *out
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

// concurrent is implemented by tools whose calls may run side by side
// (sub-agents): a reply's consecutive concurrent calls run in parallel.
type concurrent interface{ Concurrent() bool }

// runTools runs the calls of one reply and returns their results in call
// order. After a cancellation every remaining call still gets a result, so
// each tool_use keeps its tool_result.
func (a *Agent) runTools(ctx context.Context, calls []llm.Block, obs Observer) []llm.Block {
	results := make([]llm.Block, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if a.isConcurrent(calls[i].Name) {
			for j < len(calls) && a.isConcurrent(calls[j].Name) {
				j++
			}
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				results[k] = a.runTool(ctx, calls[k], obs)
			}(k)
		}
		wg.Wait()
		i = j
	}
	return results
}

func (a *Agent) isConcurrent(name string) bool {
	t := a.o.Tools.Lookup(name)
	c, ok := t.(concurrent)
	return ok && c.Concurrent()
}

// What a call's result says when the user stopped it: the whole turn
// (Ctrl-C), or only this step (Esc), after which the model goes on.
const (
	interruptedTurn = "[the user interrupted the turn]"
	stoppedStep     = "[the user stopped this call (Esc); the turn goes on: do not run it again unchanged, say what you will do instead]"
)

func (a *Agent) runTool(ctx context.Context, call llm.Block, obs Observer) llm.Block {
	if stepWasStopped(ctx) {
		return llm.Block{Type: llm.BlockToolResult, ToolUseID: call.ID, Content: "not run: " + stoppedStep, IsError: true}
	}
	if ctx.Err() != nil {
		return llm.Block{Type: llm.BlockToolResult, ToolUseID: call.ID, Content: "not run: the user interrupted the turn", IsError: true}
	}
	obs.OnToolStart(call)
	start := time.Now()
	tctx := ctx
	if g, ok := obs.(*guarded); ok {
		tctx = g.withOutput(ctx, call)
	}
	res, ran := a.runHooked(tctx, call, obs)
	switch {
	case stepWasStopped(ctx):
		res.Content += "\n" + stoppedStep
	case ctx.Err() != nil && !res.IsError && ran:
		res.Content += "\n" + interruptedTurn
	}
	a.capMu.Lock()
	err := a.o.History.Cap(&res)
	a.capMu.Unlock()
	if err != nil {
		n := notice.Warning(notice.SpillFailed, "could not spill a long tool result: "+err.Error())
		n.Err = err.Error()
		obs.OnNotice(n)
	}
	obs.OnToolEnd(call, res, time.Since(start))
	return res
}

// Request builds the next request: the static prefix (system, tools), the
// stored history, and the reminder last. It has no side effects (the
// reminder it carries is not committed), so /context may call it.
func (a *Agent) Request(ctx context.Context) *llm.Request {
	req, _ := a.request(ctx)
	return req
}

// request builds the next request and the reminder to commit once it is
// sent (nil when it carries none).
func (a *Agent) request(ctx context.Context) (*llm.Request, *reminder.Pending) {
	tools := a.o.Tools.Specs()
	if a.o.AppendOnly {
		// Built once: a tool list that changed under a preserved-thinking
		// model would invalidate every thinking block sent back.
		if a.specs == nil {
			a.specs = tools
		}
		tools = a.specs
	}
	req := &llm.Request{
		Model:     a.o.Model,
		System:    a.o.System,
		Tools:     tools,
		Messages:  a.o.History.Messages(),
		Volatile:  a.o.History.Volatile(),
		Stable:    a.o.History.Stable(),
		MaxTokens: a.o.MaxTokens,
		SessionID: a.o.SessionID,
		Thinking:  a.o.Thinking,
	}
	a.fitReply(req)
	if a.o.Reminder == nil || a.o.AppendOnly {
		return req, nil
	}
	p := a.o.Reminder.Prepare(ctx, a.todos(), reminder.Full, false)
	req.Reminder = p.Text
	return req, p
}

// fitReply lowers the request's max_tokens to the room its prompt leaves
// in the window, when the output limit is larger than the history's
// reserve (a limit over half the window): Anthropic with thinking on and
// DeepSeek refuse a request whose prompt + max_tokens is over the window.
// A thinking budget stays below max_tokens (the API's rule), and neither
// goes under the least the API takes.
func (a *Agent) fitReply(req *llm.Request) {
	h := a.o.History
	if h.Reserve() == 0 || req.MaxTokens <= h.Reserve() {
		return
	}
	room := max(h.ReplyRoom(), h.Reserve())
	if room >= req.MaxTokens {
		return
	}
	req.MaxTokens = room
	if t := &req.Thinking; t.Mode == llm.ThinkingBudget && t.Budget >= room && room > llm.MinThinkingBudget {
		t.Budget = room - 1
	}
}

// Compact summarises the history now (the /compact command).
func (a *Agent) Compact(ctx context.Context, focus string, obs Observer) error {
	if obs == nil {
		obs = nopObserver{}
	}
	obs = &guarded{obs: obs}
	return a.fit(ctx, obs, history.Need{Trigger: history.Requested, Focus: focus})
}

// fit asks the history to fit the next request (history.Fit decides every
// edit; package compact writes a summary when it asks for one), logs the
// edits and tells the user what changed.
func (a *Agent) fit(ctx context.Context, obs Observer, need history.Need) error {
	h := a.o.History
	before, window := h.Tokens(), h.Config().Window
	edits, err := h.Fit(ctx, need, summariser{a: a, obs: obs, trigger: compactTrigger(need.Trigger)})
	if w := h.Config().Window; w < window && !a.toldWindow {
		a.toldWindow = true
		obs.OnNotice(notice.Warning(notice.Overflow, fmt.Sprintf("the provider's context limit is below CONTEXT_WINDOW: working with %d tokens for the rest of this session (set CONTEXT_WINDOW to match the model)", w)))
	}
	for _, e := range edits {
		if lerr := a.logEdit(e); lerr != nil {
			return lerr
		}
		switch {
		case e.Layer == history.LayerSummary:
			if a.o.Reminder != nil {
				// The reminders the summary replaced are gone: state
				// the facts again next time.
				a.o.Reminder.Resay()
			}
			n := notice.Info(notice.Compacted, fmt.Sprintf("compacted the conversation: about %d → %d tokens", before, h.Tokens()))
			n.TokensBefore, n.TokensAfter = before, h.Tokens()
			obs.OnNotice(n)
		case e.Layer == history.LayerStrip && need.Trigger == history.Overflow:
			obs.OnNotice(notice.Info(notice.ContextEdit, fmt.Sprintf("context: cut %d latest tool result(s) to fit the provider's window", len(e.Blocks))))
		case e.Layer != history.LayerStrip:
			// Stripping is routine (every few steps of a long turn); a
			// drop breaks the cache and is worth a word.
			obs.OnNotice(editNotice(e))
		}
	}
	var se *history.SummaryError
	if errors.As(err, &se) && logFailed(se.Err) {
		return se.Err
	}
	return err
}

// summariser writes a summary for history.Fit with the agent's next
// request as the base, so the provider reads the cached prefix, and
// records the summary call's usage.
type summariser struct {
	a       *Agent
	obs     Observer
	trigger string // for PreCompact hooks: manual or auto
}

// compactTrigger is Claude Code's name for what asked for a summary.
func compactTrigger(t history.Trigger) string {
	if t == history.Requested {
		return "manual"
	}
	return "auto"
}

func (s summariser) Summarise(ctx context.Context, keep int, focus string) (llm.Block, error) {
	a := s.a
	// PreCompact hooks run before the summary is written (Claude Code's
	// contract: they cannot stop it; what they print goes to the user).
	if a.o.Hooks != nil && a.o.Label == "" {
		hookNotices(s.obs, a.o.Hooks.Fire(ctx, extend.Event{Name: extend.PreCompact, Source: s.trigger, Custom: focus}))
	}
	base, _ := a.request(ctx)
	base.Reminder = ""
	sent := a.o.Ledger.Now()
	block, reply, err := compact.Write(ctx, a.o.Provider, *base, a.o.History, keep, focus)
	if reply != nil {
		a.addUsage(reply.Usage, false)
		if lerr := a.record(sessionlog.Entry{Type: sessionlog.TypeUsage, Usage: &reply.Usage, Agent: a.o.Label, Text: sessionlog.UsageCompact}); lerr != nil {
			return llm.Block{}, lerr
		}
		sreq := compact.Request(*base, focus)
		if lerr := a.account(ledger.Call{Request: &sreq, Reply: reply, Usage: reply.Usage, Start: sent, Purpose: ledger.PurposeCompact}, s.obs); lerr != nil {
			return llm.Block{}, lerr
		}
	}
	if err == nil {
		// What the summary replaces, recorded, and the way back to it
		// told to the model in the summary itself.
		block, err = a.keepTask(block, keep)
	}
	return block, err
}

// Rewind takes back the last n user turns (or as many as there are):
// their prompts and everything after them leave the history, logged so a
// resume agrees. It returns the first prompt taken back and how many turns
// went. Files the turns changed stay as they are.
func (a *Agent) Rewind(n int) (prompt string, taken int, err error) {
	e, prompt, taken, err := a.o.History.RewindTo(n)
	if err != nil {
		return "", 0, err
	}
	if err := a.o.History.Apply(e); err != nil {
		return "", 0, err
	}
	if err := a.logEdit(e); err != nil {
		return "", 0, err
	}
	if a.o.Reminder != nil {
		a.o.Reminder.Resay()
	}
	return prompt, taken, nil
}

// recoverOverflow handles a provider's "context too long": it tells the
// user and asks the history to fit (history.Fit with the Overflow trigger
// decides everything: the learned window, the drop, the summary, the cut).
func (a *Agent) recoverOverflow(ctx context.Context, obs Observer, cause error) error {
	prompt, limit := llm.ContextLimit(cause)
	if limit > 0 {
		obs.OnNotice(notice.Info(notice.Overflow, fmt.Sprintf("the provider says the context is too long (%d tokens, limit %d): shrinking the history and retrying", prompt, limit)))
	} else {
		obs.OnNotice(notice.Info(notice.Overflow, "the provider says the context is too long: shrinking the history and retrying"))
	}
	return a.fit(ctx, obs, history.Need{Trigger: history.Overflow, Prompt: prompt, Limit: limit})
}

// noteDropped records every reasoning block the provider reports it
// dropped (drop_block, the safety net): in the session log and on screen,
// never silently. With an append-only history there are none.
func (a *Agent) noteDropped(r *llm.Reply, obs Observer) error {
	if r == nil || len(r.Dropped) == 0 {
		return nil
	}
	msg := fmt.Sprintf("the provider dropped %d earlier reasoning block(s) whose prefix changed: %s", len(r.Dropped), strings.Join(r.Dropped, ", "))
	obs.OnNotice(notice.Warning(notice.Provider, msg))
	return a.record(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: msg, Agent: a.o.Label})
}

func (a *Agent) appendMessage(m llm.Message) error {
	a.o.History.Append(m)
	return a.record(sessionlog.Entry{Type: sessionlog.TypeMessage, Message: &m, Agent: a.o.Label})
}

// record logs e. A failure stops the turn, whatever the entry: the
// history has already changed, and a resume must rebuild the same bytes.
// The log keeps an entry it could not write and writes it before the next
// one, so the user can free space and go on.
func (a *Agent) record(e sessionlog.Entry) error {
	if err := a.o.Log.Append(e); err != nil {
		return fmt.Errorf("the session log could not be written, stopping so nothing is lost silently: %w", err)
	}
	return nil
}

// logFailed tells a log failure, which ends the turn, from a failure of
// the work itself, which may not.
func logFailed(err error) bool {
	var we *sessionlog.WriteError
	return errors.As(err, &we)
}

func (a *Agent) logEdit(e history.Edit) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding a history edit: %w", err)
	}
	return a.record(sessionlog.Entry{Type: sessionlog.TypeEdit, Edit: b, Agent: a.o.Label})
}

// keepTask adds to a compaction's summary what harness keeps itself (the
// todo list, the files touched, earlier decisions, the removed results
// and where to read them back), and logs what the compaction removes.
func (a *Agent) keepTask(block llm.Block, keep int) (llm.Block, error) {
	h := a.o.History
	k := compact.Kept{Todos: a.todos(), SpillDir: h.Config().SpillDir, Original: a.originalResult}
	out, d, err := compact.TaskKept(block, h.Messages(), keep, k)
	if err != nil {
		// The results could not be kept on disk: still list them.
		k.SpillDir = ""
		out, d, _ = compact.TaskKept(block, h.Messages(), keep, k)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return block, fmt.Errorf("encoding what a compaction removed: %w", err)
	}
	if err := a.record(sessionlog.Entry{Type: sessionlog.TypeDropped, Dropped: raw, Agent: a.o.Label}); err != nil {
		return block, err
	}
	a.mu.Lock()
	a.dropped = &d
	a.mu.Unlock()
	return out, nil
}

// originalResult is a tool result's content as first logged.
func (a *Agent) originalResult(id string) string {
	if a.o.Log == nil || a.o.Log.Path() == "" {
		return ""
	}
	entries, _ := sessionlog.ReadFile(a.o.Log.Path())
	for _, e := range entries {
		if e.Type != sessionlog.TypeMessage || e.Message == nil || e.Agent != a.o.Label {
			continue
		}
		for _, b := range e.Message.Blocks {
			if b.Type == llm.BlockToolResult && b.ToolUseID == id {
				return b.Content
			}
		}
	}
	return ""
}

// LastDropped is what the session's latest compaction removed, if any.
func (a *Agent) LastDropped() (compact.Dropped, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dropped == nil {
		return compact.Dropped{}, false
	}
	return *a.dropped, true
}

// SetDropped restores the latest compaction's report (on resume).
func (a *Agent) SetDropped(d compact.Dropped) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dropped = &d
}

// LedgerObserver is implemented by observers that show each request's
// ledger record (stream-json's ledger events).
type LedgerObserver interface {
	OnLedger(r ledger.Record)
}

// account adds one request to the ledger, logs its record and shows it.
func (a *Agent) account(c ledger.Call, obs Observer) error {
	if a.o.Ledger == nil {
		return nil
	}
	c.Agent = a.o.Label
	r := a.o.Ledger.Add(c)
	e, err := ledger.Entry(r)
	if err != nil {
		return err
	}
	if err := a.record(e); err != nil {
		return err
	}
	if lo, ok := obs.(LedgerObserver); ok && obs != nil {
		lo.OnLedger(r)
	}
	return nil
}

// Ledger is the session's cost ledger (nil when not kept).
func (a *Agent) Ledger() *ledger.Book { return a.o.Ledger }

func (a *Agent) logUsage(u llm.Usage) error {
	return a.record(sessionlog.Entry{Type: sessionlog.TypeUsage, Usage: &u, Agent: a.o.Label})
}

// AddUsage counts a sub-agent's usage into this session's.
func (a *Agent) AddUsage(u llm.Usage) { a.addUsage(u, false) }

func (a *Agent) addUsage(u llm.Usage, last bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage = a.usage.Add(u)
	if last {
		a.last = u
	}
}

// SetUsage sets the session's running total (on resume).
func (a *Agent) SetUsage(u llm.Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.usage = u
}

// Usage is the session's total usage so far.
func (a *Agent) Usage() llm.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage
}

// LastUsage is the usage of the most recent model request of the loop.
func (a *Agent) LastUsage() llm.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// History is the agent's history.
func (a *Agent) History() *history.History { return a.o.History }

// Options returns the options the agent was built with.
func (a *Agent) Options() Options { return a.o }

// SetModel makes the next requests name model (a custom command's model,
// for its turn). Call it between turns.
func (a *Agent) SetModel(model string) { a.o.Model = model }

// SetSystem replaces the system prompt; only before the first request
// (Options.Ready), or the provider's cached prefix is lost.
func (a *Agent) SetSystem(system string) { a.o.System = system }

func diff(a, b llm.Usage) llm.Usage {
	return llm.Usage{Input: a.Input - b.Input, CacheRead: a.CacheRead - b.CacheRead, CacheWrite: a.CacheWrite - b.CacheWrite, Output: a.Output - b.Output, Reasoning: a.Reasoning - b.Reasoning}
}

// editNotice tells what a context layer did.
func editNotice(e history.Edit) notice.Notice {
	n := notice.Info(notice.ContextEdit, describeEdit(e))
	n.Layer, n.Blocks = e.Layer, len(e.Blocks)
	return n
}

// compactFailed is the notice of a compaction that failed (the turn goes
// on uncompacted).
func compactFailed(err error) notice.Notice {
	n := notice.Warning(notice.CompactFailed, "compaction failed: "+err.Error())
	n.Err = err.Error()
	return n
}

// describeEdit says in one line what a context layer did.
func describeEdit(e history.Edit) string {
	switch e.Layer {
	case history.LayerStrip:
		return fmt.Sprintf("context: stripped %d old tool result(s) to stubs", len(e.Blocks))
	case history.LayerDrop:
		return fmt.Sprintf("context: emptied %d oldest tool result(s) to stay under the window", len(e.Blocks))
	case history.LayerSummary:
		return "context: replaced older history with a summary"
	case history.LayerRewind:
		return "context: took back the last turns"
	}
	return "context: " + e.Layer
}
