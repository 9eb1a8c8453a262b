package replay

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/reminder"
)

// Old-thinking handling the benchmark models (Options.OldThinking).
const (
	ThinkingKeep  = "keep"  // every turn's reasoning stays (preserved-thinking models bill it as input)
	ThinkingClear = "clear" // reasoning of earlier turns removed at each turn's start (client-side, or clear_thinking keep 1 server-side: the same prompt)
)

// seedSummarySystem stands for the reference harness's summariser, which
// used a system prompt of its own (and so paid for the whole history).
const seedSummarySystem = "You are a summarisation assistant. Summarise the coding session below for a colleague who will continue it: the goal, what was done, the files touched, the current state and the next steps."

// Options configure a replay.
type Options struct {
	Pricing string // Anthropic or OpenAI
	Window  int    // context window in tokens
	// Config is the base history configuration; its Strategy and Window are
	// set per run. Zero fields take the defaults.
	Config history.Config
	// Decompose fills Result.Decomposition.
	Decompose bool

	// ThinkingTokens models preserved thinking, which the recorded
	// trajectories carry none of: a reasoning block of about this many
	// tokens heads every recorded assistant turn. 0 models none.
	ThinkingTokens int
	// OldThinking is ThinkingKeep (also "") or ThinkingClear.
	OldThinking string

	// NoReminder leaves the reminder out (the comparison with the live
	// loop, which runs without one).
	NoReminder bool
	// OnRequest, when set, sees every request the replay costs, in
	// order, summarisation requests included (it must not keep or change
	// the messages' blocks).
	OnRequest func(*llm.Request)
}

// Result is one strategy's totals over the trajectories.
type Result struct {
	Strategy           string  `json:"policy"` // the key predates the name
	Trajectories       int     `json:"trajectories"`
	Requests           int     `json:"requests"`
	TokensSent         int     `json:"tokens_sent"`
	CacheReadShare     float64 `json:"cache_read_share"`
	CostRatio          float64 `json:"cost_ratio"`
	VisibleOutputChars float64 `json:"visible_output_chars"`
	PeakContext        int     `json:"peak_context"`
	Compactions        int     `json:"compactions"`
	Drops              int     `json:"drops"`
	// Strips counts the strip batches: each one rewrites the cache from
	// its first edited message on.
	Strips int `json:"strips"`
	// Decomposition is set when Options.Decompose is.
	Decomposition *Decomposition `json:"decomposition,omitempty"`
	// ReminderTokens is the reminder's mean cost per request in tokens:
	// the whole ephemeral reminder on every request, or the persisted
	// deltas (append strategy) spread over the requests.
	ReminderTokens float64 `json:"reminder_tokens_per_request"`

	// Cost is the input-plus-summary cost in dollars (not in the JSON
	// report, which gives the ratio to raw).
	Cost      float64 `json:"-"`
	cacheRead int
	visible   int
	reminder  int
}

// Run replays every trajectory under strategy.
func Run(ctx context.Context, trajs []Trajectory, strategy string, opts Options) (Result, error) {
	res := Result{Strategy: strategy}
	if _, err := StrategyNamed(strategy); err != nil {
		return res, err
	}
	if opts.Decompose {
		res.Decomposition = newDecomposition()
	}
	for _, t := range trajs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := runOne(ctx, t, strategy, opts, &res); err != nil {
			return res, fmt.Errorf("replaying %s under %s: %w", t.Name, strategy, err)
		}
		res.Trajectories++
	}
	if res.TokensSent > 0 {
		res.CacheReadShare = float64(res.cacheRead) / float64(res.TokensSent)
	}
	if res.Requests > 0 {
		res.VisibleOutputChars = float64(res.visible) / float64(res.Requests)
		res.ReminderTokens = float64(res.reminder) / float64(res.Requests)
	}
	return res, nil
}

// RunAll replays under each strategy and fills CostRatio relative to raw
// (which is run too when not asked for).
func RunAll(ctx context.Context, trajs []Trajectory, strategies []string, opts Options) ([]Result, error) {
	var out []Result
	var raw *Result
	for _, p := range strategies {
		r, err := Run(ctx, trajs, p, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if p == StrategyRaw {
			raw = &out[len(out)-1]
		}
	}
	base := 0.0
	if raw != nil {
		base = raw.Cost
	} else {
		r, err := Run(ctx, trajs, StrategyRaw, opts)
		if err != nil {
			return nil, err
		}
		base = r.Cost
	}
	for i := range out {
		if base > 0 {
			out[i].CostRatio = out[i].Cost / base
		}
	}
	return out, nil
}

// clock is the replay's deterministic time: one minute a request.
var epoch = time.Date(2025, 11, 18, 9, 0, 0, 0, time.UTC)

func runOne(ctx context.Context, t Trajectory, name string, opts Options, res *Result) error {
	r, err := newReplayRun(ctx, t, name, opts, res)
	if err != nil {
		return err
	}
	started := false
	for k, m := range t.Messages {
		switch {
		case m.Role == llm.RoleAssistant:
			if err := r.assistant(k, m); err != nil {
				return err
			}
		case hasToolResult(m):
			r.toolResult(m)
		case isFeedback(m): // the harness answers a malformed reply: same turn
			r.h.Append(r.withDelta(m, false))
		default: // the user speaks: a new turn
			if started && !r.server {
				count(res, r.h.EndTurn())
			}
			started = true
			r.h.Append(r.withDelta(m, true))
		}
	}
	if !r.server {
		count(res, r.h.EndTurn())
	}
	if r.clearing != nil {
		res.Drops += r.clearing.batches
	}
	return nil
}

// replayRun is one trajectory replayed under one strategy: the history it
// manages, the simulated cache and disk, the clock, and the result it
// fills.
type replayRun struct {
	ctx       context.Context
	t         Trajectory
	opts      Options
	res       *Result
	server    bool            // the provider compacts, not history.Fit
	clearing  *serverClearing // the server's tool-result clearing, if server
	persisted bool            // the reminder goes into the messages, not apart
	h         *history.History
	cache     *Cache
	disk      *simDisk
	fitSum    fitSummariser
	task      string
	calls     []llm.Block // of the latest assistant message
	step      int         // requests sent so far: the clock
	told      bool        // the persisted reminder has been sent
	lastHour  time.Time   // when it was last sent, to the hour
}

// newReplayRun sets the history's configuration for strategy name the way
// the agent would, with nothing written to disk.
func newReplayRun(ctx context.Context, t Trajectory, name string, opts Options, res *Result) (*replayRun, error) {
	strategy, err := StrategyNamed(name)
	if err != nil {
		return nil, err
	}
	cfg := opts.Config
	cfg.Strategy = strategy
	cfg.Window = opts.Window
	if cfg.RewriteCost == 0 {
		p := prices[opts.Pricing]
		cfg.RewriteCost = history.RewriteCostOf(&p)
	}
	ref, isRef := strategy.(reference)
	if isRef {
		// The references keep their own layers whatever the shipped
		// configuration is set to.
		cfg.Cap, cfg.TrimText = history.SeedCap, false
	}
	cfg.SpillDir = "" // nothing is written to disk in a replay
	r := &replayRun{
		ctx: ctx, t: t, opts: opts, res: res,
		server:    name == StrategyServer,
		persisted: strategy.Layers().AppendOnly || opts.NoReminder,
		cache:     NewCache(opts.Pricing),
		disk:      newSimDisk(),
		task:      taskText(t),
	}
	if r.server {
		r.clearing = newServerClearing(opts.Window)
	}
	if cfg.Disk == nil {
		cfg.Disk = r.disk
	}
	r.h = history.New(cfg)
	// The summariser writes what history.Fit asks for, from the request
	// the next step would send, like the agent's.
	sum := &summariser{cache: r.cache, pricing: opts.Pricing, onRequest: opts.OnRequest}
	r.fitSum = fitSummariser{h: r.h, sum: sum, res: res, opts: opts, base: func() llm.Request {
		b := r.base()
		if isRef && ref.ownSummariser {
			b.System, b.Tools = seedSummarySystem, nil
		}
		return b
	}}
	return r, nil
}

func (r *replayRun) now() time.Time { return epoch.Add(time.Duration(r.step) * time.Minute) }

// base is the request the next step sends, before caching.
func (r *replayRun) base() llm.Request {
	req := llm.Request{
		System: r.t.System, Tools: r.t.Tools, Messages: r.h.Messages(), Volatile: r.h.Volatile(), Stable: r.h.Stable(),
		SessionID: r.t.Name,
	}
	if r.opts.OldThinking == ThinkingClear {
		req.Messages = clearOldThinking(req.Messages)
	}
	if r.clearing != nil {
		req.Messages = r.clearing.apply(&req)
	}
	if !r.persisted {
		req.Reminder = reminder.Format(reminder.Facts{Time: r.now(), Git: true, Branch: "main"})
	}
	return req
}

func (r *replayRun) fit(trigger history.Trigger) error {
	edits, err := r.h.Fit(r.ctx, history.Need{Trigger: trigger}, r.fitSum)
	count(r.res, edits)
	return err
}

// withDelta adds the persisted reminder to m: the time at a turn's start
// and when the hour changes, the branch once; nothing else changes in a
// replay.
func (r *replayRun) withDelta(m llm.Message, turnStart bool) llm.Message {
	if !r.persisted || r.opts.NoReminder {
		return m
	}
	hour := r.now().Truncate(time.Hour)
	if !turnStart && r.told && hour.Equal(r.lastHour) {
		return m
	}
	text := reminder.FormatDelta(reminder.Facts{Time: r.now(), Git: true, Branch: "main"}, true, !r.told, false)
	r.told, r.lastHour = true, hour
	r.res.reminder += Tokens(len(text))
	m.Blocks = append(append([]llm.Block(nil), m.Blocks...), llm.Block{Type: llm.BlockText, Text: text, Layer: history.LayerReminder})
	return m
}

// assistant sends the request that produced message k, m, costs it, and
// appends m with its tool calls pending.
func (r *replayRun) assistant(k int, m llm.Message) error {
	if !r.server {
		if err := r.fit(history.BeforeRequest); err != nil {
			return err
		}
	}
	r.send()
	r.h.Append(withThinking(m, r.opts.ThinkingTokens, r.step))
	r.calls = r.calls[:0]
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolUse {
			r.calls = append(r.calls, b)
		}
	}
	// A reply without tool calls that the harness does not answer ends
	// the turn, as in the agent.
	msgs := r.t.Messages
	if len(r.calls) == 0 && !r.server && (k+1 == len(msgs) || !isFeedback(msgs[k+1])) {
		if err := r.fit(history.TurnEnd); err != nil {
			return err
		}
	}
	if r.server && r.h.NeedsCompact() {
		// Server-side compaction, which the prefix check accepts: the
		// same summary, in the provider's hands.
		if _, err := r.h.Fit(r.ctx, history.Need{Trigger: history.Requested}, r.fitSum); err != nil {
			return err
		}
	}
	return nil
}

// send sends the next request through the cache and adds its usage and
// cost to the result.
func (r *replayRun) send() {
	res := r.res
	req := r.base()
	if req.Reminder != "" {
		res.reminder += Tokens(len(req.Reminder))
	}
	if r.opts.OnRequest != nil {
		r.opts.OnRequest(&req)
	}
	u := r.cache.Request(&req)
	r.step++
	res.Requests++
	res.TokensSent += u.Prompt()
	res.cacheRead += u.CacheRead
	res.PeakContext = max(res.PeakContext, u.Prompt())
	res.Cost += Cost(r.opts.Pricing, u)
	if d := res.Decomposition; d != nil {
		d.addRequest(r.opts.Pricing, &req, r.cache.last, u, r.task)
	}
	res.visible += visibleOutput(req.Messages)
	r.h.Observe(u)
}

// toolResult appends the results of the pending calls, capped, once their
// writes are on the simulated disk.
func (r *replayRun) toolResult(m llm.Message) {
	for _, c := range r.calls { // they ran: their writes are on disk
		r.disk.run(c)
	}
	r.calls = r.calls[:0]
	m.Blocks = append([]llm.Block(nil), m.Blocks...)
	for i := range m.Blocks {
		_ = r.h.Cap(&m.Blocks[i]) // no SpillDir: nothing to fail
	}
	r.h.Append(r.withDelta(m, false))
}

// fitSummariser is the replay's history.Summariser: package compact with
// the synthesised summariser, costed into the result.
type fitSummariser struct {
	h    *history.History
	sum  *summariser
	res  *Result
	opts Options
	base func() llm.Request
}

func (f fitSummariser) Summarise(ctx context.Context, keep int, focus string) (llm.Block, error) {
	b := f.base()
	block, reply, err := compact.Write(ctx, f.sum, b, f.h, keep, focus)
	if reply != nil {
		res := f.res
		res.Compactions++
		res.TokensSent += reply.Usage.Prompt()
		res.cacheRead += reply.Usage.CacheRead
		res.PeakContext = max(res.PeakContext, reply.Usage.Prompt())
		res.Cost += Cost(f.opts.Pricing, reply.Usage)
		if d := res.Decomposition; d != nil {
			d.addSummary(f.opts.Pricing, reply.Usage)
		}
	}
	return block, err
}

// serverClearing models clear_tool_uses_20250919 as the context-editing
// docs describe it (platform.claude.com/docs/en/build-with-claude/
// context-editing): once the prompt exceeds the trigger, the oldest tool
// results are replaced by a placeholder, keeping the latest keep tool
// uses, at least clearAtLeast tokens at a time so that the cache write a
// clearing costs buys many cached requests after it. The client keeps the
// whole history; the placeholder and the set cleared are the provider's.
// The parameters are what harness would send: trigger at half the
// window, clear_at_least a fifth of it, keep 3 (the documented default).
type serverClearing struct {
	trigger, clearAtLeast, keep int
	cleared                     map[string]bool
	batches                     int
}

// clearedPlaceholder stands for the API's placeholder text.
const clearedPlaceholder = "[tool result cleared by context management]"

func newServerClearing(window int) *serverClearing {
	if window <= 0 {
		window = history.DefaultWindow
	}
	return &serverClearing{trigger: window / 2, clearAtLeast: window / 5, keep: 3, cleared: map[string]bool{}}
}

// apply returns the messages the model sees: those cleared before, and a
// new batch when the prompt is over the trigger.
func (c *serverClearing) apply(r *llm.Request) []llm.Message {
	size := Tokens(len(r.System))
	for _, t := range r.Tools {
		size += Tokens(len(t.Name) + len(t.Description) + len(t.Schema))
	}
	var ids []string // tool results, oldest first
	body := map[string]int{}
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			n := Tokens(len(b.Text) + len(b.Thinking) + len(b.Input))
			if b.Type == llm.BlockToolResult {
				ids = append(ids, b.ToolUseID)
				body[b.ToolUseID] = Tokens(len(b.Content))
				if c.cleared[b.ToolUseID] {
					n += Tokens(len(clearedPlaceholder))
				} else {
					n += body[b.ToolUseID]
				}
			}
			size += n
		}
	}
	if size > c.trigger {
		// The docs: a clearing that cannot free clear_at_least tokens is
		// not applied.
		freed, batch := 0, []string(nil)
		for _, id := range ids[:max(0, len(ids)-c.keep)] {
			if freed >= c.clearAtLeast && size-freed <= c.trigger {
				break
			}
			if !c.cleared[id] && body[id] > Tokens(len(clearedPlaceholder)) {
				batch = append(batch, id)
				freed += body[id] - Tokens(len(clearedPlaceholder))
			}
		}
		if freed >= c.clearAtLeast {
			for _, id := range batch {
				c.cleared[id] = true
			}
			c.batches++
		}
	}
	out := append([]llm.Message(nil), r.Messages...)
	for i, m := range out {
		changed := false
		for _, b := range m.Blocks {
			if b.Type == llm.BlockToolResult && c.cleared[b.ToolUseID] {
				changed = true
			}
		}
		if !changed {
			continue
		}
		blocks := append([]llm.Block(nil), m.Blocks...)
		for k, b := range blocks {
			if b.Type == llm.BlockToolResult && c.cleared[b.ToolUseID] {
				blocks[k].Content = clearedPlaceholder
			}
		}
		out[i].Blocks = blocks
	}
	return out
}

func count(res *Result, edits []history.Edit) {
	for _, e := range edits {
		switch e.Layer {
		case history.LayerDrop:
			res.Drops++
		case history.LayerStrip:
			res.Strips++
		}
	}
}

// isFeedback reports whether m is only the harness's feedback on a
// malformed reply.
func isFeedback(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Layer != history.LayerFeedback {
			return false
		}
	}
	return len(m.Blocks) > 0
}

func hasToolResult(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

// visibleOutput is the tool output msgs show: the tool results' content
// and the restated output of closed rounds (the text block after a
// history.LayerCloseCall block, stubbed or not).
func visibleOutput(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		for i, b := range m.Blocks {
			switch {
			case b.Type == llm.BlockToolResult:
				n += len(b.Content)
			case b.Type == llm.BlockText && i > 0 && m.Blocks[i-1].Layer == history.LayerCloseCall:
				n += len(b.Text)
			}
		}
	}
	return n
}

// summariser is the replay's stand-in for the model during a compaction:
// it costs the request in the shared cache and answers with a note
// synthesised from the history.
type summariser struct {
	cache     *Cache
	pricing   string
	onRequest func(*llm.Request)
}

func (s *summariser) Name() string { return s.pricing }

func (s *summariser) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Reply, error) {
	if s.onRequest != nil {
		s.onRequest(req)
	}
	u := s.cache.Request(req)
	note := SynthesiseSummary(req.Messages)
	u.Output = Tokens(len(note))
	return &llm.Reply{
		Message:    llm.Text(llm.RoleAssistant, "<summary>\n"+note+"\n</summary>"),
		StopReason: llm.StopEnd,
		Usage:      u,
	}, nil
}

// SummaryChars is the size of a synthesised summary: about 1,800 tokens,
// a generous handoff note.
const SummaryChars = 6000

var pathLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z0-9_./-]+\.(?:py|go|js|ts|rs|c|h|rst|txt|cfg|toml|json|yaml|yml|md|html|css)\b`)
})

// SynthesiseSummary builds a deterministic handoff note of SummaryChars
// chars from msgs: the first user words as the goal, the files named, and
// the latest assistant thoughts.
func SynthesiseSummary(msgs []llm.Message) string {
	var goal, happened strings.Builder
	files := map[string]bool{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			text := b.Text + b.Content + string(b.Input)
			for _, p := range pathLike().FindAllString(text, -1) {
				files[p] = true
			}
			if m.Role == llm.RoleUser && b.Type == llm.BlockText && goal.Len() == 0 {
				goal.WriteString(clip(b.Text, 1500))
			}
			if m.Role == llm.RoleAssistant && b.Type == llm.BlockText {
				happened.WriteString("- " + clip(strings.ReplaceAll(b.Text, "\n", " "), 160) + "\n")
			}
		}
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	h := happened.String()
	if len(h) > 2500 {
		h = h[len(h)-2500:]
	}
	note := "## Goal\n" + goal.String() + "\n## What happened\n" + h + "## Files\n" + clip(strings.Join(names, "\n"), 1200) +
		"\n## State\nSynthesised by the replay: no model was called.\n## Next\nContinue from the latest messages.\n"
	if len(note) > SummaryChars {
		return note[:SummaryChars]
	}
	return note + strings.Repeat(".", SummaryChars-len(note))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// withThinking returns m headed by a modelled reasoning block of about
// tokens tokens (distinct per step, so the cache cannot share it).
func withThinking(m llm.Message, tokens, step int) llm.Message {
	if tokens <= 0 {
		return m
	}
	text := fmt.Sprintf("reasoning of step %d: ", step)
	text += strings.Repeat("weighing the next command. ", max(0, int(float64(tokens)*CharsPerToken)-len(text))/27+1)
	m.Blocks = append([]llm.Block{{Type: llm.BlockThinking, Thinking: text, Signature: fmt.Sprintf("sig-%d", step)}}, m.Blocks...)
	return m
}

// clearOldThinking removes the reasoning of assistant messages before the
// latest user prompt, as clearing at each turn's start does.
func clearOldThinking(msgs []llm.Message) []llm.Message {
	last := -1
	for i, m := range msgs {
		if m.Role == llm.RoleUser && !hasToolResult(m) {
			last = i
		}
	}
	out := append([]llm.Message(nil), msgs...)
	for i := 0; i < last; i++ {
		if out[i].Role == llm.RoleAssistant && out[i].HasThinking() {
			out[i] = out[i].WithoutThinking()
		}
	}
	return out
}
