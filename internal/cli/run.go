package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/ui"
)

type runOptions struct {
	Prompt       string
	OutputFormat string
	MaxCost      float64 // USD at list price; zero: no limit
	Images       []string
}

func newRunCommand(g *globalOptions, stdio Stdio) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one task to completion without asking questions",
		Long: `Run one task headless: the agent works until it answers, and nothing asks you.
A call that would need your approval is refused and the model is told why; widen
what runs with --allow PATTERN or --yolo (the sandbox stays on either way).

PROMPT is the arguments joined by spaces, or -p PROMPT; "-" reads it from stdin.

Output formats:
  text         the final answer on stdout, progress on stderr
  json         one object: result, session_id, steps, usage, cost_usd, ledger,
               is_error, permission_denials, and with is_error a reason
               (error, max_steps, interrupted, budget, needs_approval) and
               error
  stream-json  one JSON event a line (a "ledger" event after each model
               request), ending with the result object

ledger is where the run's money went: input_total (the provider's count),
tiers (cache_read, cache_write, uncached tokens, as reported), kinds (system,
tools, tool_results, assistant, user, reminders, thinking, summaries: an
estimate scaled to the reported total, kinds_estimated true), output and
reasoning tokens, dollars, and reasons (cause and text: model_switch,
tools_change, system_change, edit, idle_expiry, cache_miss, large_result,
compaction, thinking).

permission_denials lists every call the gate refused: tool_name, tool_use_id
and tool_input (as Claude Code's -p JSON names them), verdict ("ask": it
needed an approval; "deny": a deny rule or the sandbox's walls), rule (what
decided) and, for an "ask", allow: the --allow flag (or --yolo) that would
admit it.

--max-cost USD stops the run after the first model reply that brings its cost
at list price (or the PRICE_* settings) to USD or more; the model's price must
be known.

EXIT STATUS
  0    success: the agent finished and no call needed an approval
  1    failure: the agent or a provider failed, or --max-steps or --max-cost
       stopped it first (reason error, max_steps, budget)
  2    bad usage (unknown flag, missing prompt)
  3    the agent finished, but calls were refused for want of an approval,
       which a headless run cannot ask for (reason needs_approval): the work
       may be unfinished whatever the answer says, and whatever the run
       wrote (a test run's caches count as much as the edit it needed). The
       message and permission_denials name the --allow flags that would
       admit them. Calls a deny rule or the walls refused are listed too
       but do not change the status.
  130  interrupted (SIGINT or SIGTERM); completed steps are saved
  A failure or an interruption decides the status over refusals; the JSON
  lists the refusals either way.
`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Prompt == "" {
				o.Prompt = strings.Join(args, " ")
			} else if len(args) > 0 {
				return usageError("give the prompt either as arguments or with -p, not both")
			}
			return runRun(cmd.Context(), g, o, stdio)
		},
	}
	g.register(cmd)
	cmd.Flags().StringVarP(&o.Prompt, "prompt", "p", "", "the task (\"-\" reads it from stdin)")
	cmd.Flags().StringVar(&o.OutputFormat, "output-format", "text", "text, json or stream-json")
	cmd.Flags().Float64Var(&o.MaxCost, "max-cost", 0, "stop once the run has cost this many USD at list price")
	stringArrayVar(cmd.Flags(), &o.Images, "image", "", "send this image (PNG, JPEG, GIF, WebP; a screenshot) with the prompt; repeatable")
	return cmd
}

// runResult is the json output and the last line of stream-json.
type runResult struct {
	Type      string    `json:"type,omitempty"`
	Result    string    `json:"result"`
	SessionID string    `json:"session_id"`
	Steps     int       `json:"steps"`
	Usage     usageJSON `json:"usage"`
	CostUSD   *float64  `json:"cost_usd,omitempty"` // at list price; absent when the model's price is unknown
	// Ledger is the run's cost ledger: input by cache tier (reported) and
	// by kind (estimated), dollars, and why it cost what it did.
	Ledger  *ledger.Summary `json:"ledger,omitempty"`
	IsError bool            `json:"is_error"`
	Reason  string          `json:"reason,omitempty"` // with is_error: one of the reason* values
	Sandbox *app.Walls      `json:"sandbox,omitempty"`
	Error   string          `json:"error,omitempty"`
	// PermissionDenials are the calls the gate refused, in order.
	PermissionDenials []denialJSON `json:"permission_denials"`
	// SandboxFindings are the repositories, gitdirs and hooks paths that
	// appeared during the run, each with what it configures to run.
	SandboxFindings []findingJSON `json:"sandbox_findings,omitempty"`
}

// Why a run ended in error, for runResult.Reason.
const (
	reasonError       = "error"          // the agent or the provider failed
	reasonMaxSteps    = "max_steps"      // the step limit came first
	reasonInterrupted = "interrupted"    // SIGINT or SIGTERM
	reasonBudget      = "budget"         // --max-cost was reached
	reasonApproval    = "needs_approval" // calls were refused for want of an approval
)

type usageJSON struct {
	Input      int `json:"input_tokens"`
	CacheRead  int `json:"cache_read_tokens"`
	CacheWrite int `json:"cache_write_tokens"`
	Output     int `json:"output_tokens"`
}

func runRun(ctx context.Context, g *globalOptions, o *runOptions, stdio Stdio) error {
	if err := o.check(stdio); err != nil {
		return err
	}
	// SIGINT and SIGTERM cancel the run: the agent stops at the next step
	// boundary (a running command is killed), the result is written and the
	// session closed, so nothing is left in /tmp. A second signal, once the
	// first has cancelled, kills at once as usual.
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }()
	interrupted := func() bool { return ctx.Err() != nil && parent.Err() == nil }

	var tally refusals
	s, err := openSession(ctx, g, stdio, sessionSetup{OnDecision: tally.note})
	if err != nil {
		if interrupted() {
			out := runResult{IsError: true, Reason: reasonInterrupted, Error: "interrupted before the session started"}
			writeResult(stdio, o.OutputFormat, out, nil)
			return &ExitError{Code: exitInterrupted, Err: errors.New(out.Error)}
		}
		return err
	}
	defer s.Close()
	for _, w := range s.Warnings {
		fmt.Fprintln(stdio.Err, "harness: warning:", ui.Visible(w.Text))
	}
	images, err := loadRunImages(s.Config.EnvFile, s.Config.Model, o.Images)
	if err != nil {
		return err
	}
	obs, stream := runObserver(s, o, stdio)
	runCtx, budget, cancel, err := withBudget(ctx, s, o, &obs)
	if err != nil {
		return err
	}
	defer cancel()
	watch := &refusalWatch{Observer: obs, r: &tally}
	prompt, mentioned, done, err := runPrompt(ctx, s, o.Prompt, stdio)
	if err != nil {
		return err
	}
	defer done()
	s.Checkpoints.StartTurn()
	res, runErr := s.Agent.RunWithImages(runCtx, prompt, append(images, mentioned...), watch)
	out := runOutcome(s, res, runErr, interrupted(), budget, o.MaxCost)
	// Refusals decide the status, not whether the disk changed: a test
	// run rewrites its caches whether or not the edit it needed was made.
	project := s.Sandbox.Policy().Project()
	out.PermissionDenials = tally.denials(project)
	if why := tally.summary(project); why != "" {
		if !out.IsError {
			out.IsError, out.Reason, out.Error = true, reasonApproval, why
		} else if out.Error != "" {
			out.Error += "\n" + why
		}
	}
	found, later := s.Sandbox.Policy().Findings(), s.LaterRun.All()
	out.SandboxFindings = findingsJSON(found, later)
	if w := findingsWarning(found) + laterWarning(later); w != "" {
		fmt.Fprint(stdio.Err, "harness: "+w)
	}
	writeRunOutput(stdio, o.OutputFormat, s.ID, out, stream)
	return runExit(out)
}

// check validates the flags and reads a prompt of "-" from stdin.
func (o *runOptions) check(stdio Stdio) error {
	switch o.OutputFormat {
	case "text", "json", "stream-json":
	default:
		return usageError("--output-format must be text, json or stream-json, not %q", o.OutputFormat)
	}
	if o.MaxCost < 0 {
		return usageError("--max-cost cannot be negative")
	}
	if o.Prompt == "-" {
		b, err := io.ReadAll(stdio.stdin())
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		o.Prompt = string(b)
	}
	if strings.TrimSpace(o.Prompt) == "" {
		return usageError("no prompt: harness run PROMPT, harness run -p PROMPT, or harness run - < file")
	}
	return nil
}

// runObserver is what watches the run: JSON events on stdout for
// stream-json, progress lines on stderr otherwise; sub-agents alike.
func runObserver(s *Session, o *runOptions, stdio Stdio) (agent.Observer, *streamObserver) {
	var obs agent.Observer
	var stream *streamObserver
	switch o.OutputFormat {
	case "stream-json":
		stream = &streamObserver{enc: json.NewEncoder(stdio.Out)}
		stream.emit(map[string]any{"type": "system", "session_id": s.ID, "model": s.Config.Model, "sandbox": s.Sandbox.Backend(), "walls": s.Walls, "project": s.Sandbox.Policy().Project()})
		for _, w := range s.Warnings { // typed, beside their text on stderr
			stream.OnNotice(w)
		}
		obs = stream
	default:
		obs = &progressObserver{w: stdio.Err}
	}
	s.SetNotify(obs.OnNotice)
	s.SetSubagentObserver(func(label string) agent.Observer {
		if stream != nil {
			return &subagentStream{label: label, s: stream}
		}
		return &subagentLines{label: label, print: func(line string) { fmt.Fprintln(stdio.Err, line) }}
	})
	return obs, stream
}

// withBudget wraps *obs to stop the run past --max-cost; without one the
// run's context is ctx itself.
func withBudget(ctx context.Context, s *Session, o *runOptions, obs *agent.Observer) (context.Context, *budgetObserver, context.CancelFunc, error) {
	if o.MaxCost == 0 {
		return ctx, nil, func() {}, nil
	}
	price, ok := priceFor(s.Config, s.Config.Model)
	if !ok {
		return nil, nil, nil, usageError("--max-cost needs the price of %s: it is not in the catalogue (harness models); set PRICE_INPUT, PRICE_OUTPUT, PRICE_CACHE_READ and PRICE_CACHE_WRITE", s.Config.Model)
	}
	runCtx, cancel := context.WithCancel(ctx)
	budget := &budgetObserver{Observer: *obs, price: price, max: o.MaxCost, stop: cancel}
	*obs = budget
	return runCtx, budget, cancel, nil
}

// runPrompt is the prompt the model gets: a custom command's ("/name
// args", as in chat), with @SERVER:URI resources and @path files (or
// images) attached; a mention that attaches nothing is said. done ends
// the command's scope.
func runPrompt(ctx context.Context, s *Session, prompt string, stdio Stdio) (string, []*llm.Image, func(), error) {
	done := func() {}
	cmd, isCmd, err := s.StartCommand(ctx, strings.TrimSpace(prompt), nil)
	if err != nil {
		return "", nil, done, err
	}
	if isCmd {
		prompt = cmd.Prompt
		done = cmd.Done
		for _, n := range cmd.Notes {
			fmt.Fprintln(stdio.Err, "harness: "+n)
		}
	}
	prompt, notes := attachResources(ctx, prompt, s.MCP)
	pol := s.Sandbox.Policy()
	prompt, mentioned, fileNotes := attachMentions(prompt, pol.Project(), pol.DenyRead(), takesImages(s.Config.EnvFile, s.Config.Model), func(name string) bool { return isResourceMention(s.MCP, name) })
	for _, n := range append(notes, fileNotes...) {
		fmt.Fprintln(stdio.Err, "harness: @ "+n)
	}
	return prompt, mentioned, done, nil
}

// runOutcome is the run's result from the agent's: text, usage, cost,
// ledger, and why it stopped if it did not finish.
func runOutcome(s *Session, res *agent.Result, runErr error, interrupted bool, budget *budgetObserver, maxCost float64) runResult {
	out := runResult{SessionID: s.ID, Sandbox: &s.Walls}
	if res != nil {
		out.Result, out.Steps = res.Text, res.Steps
		u := res.Usage
		out.Usage = usageJSON{u.Input, u.CacheRead, u.CacheWrite, u.Output}
		if price, ok := priceFor(s.Config, s.Config.Model); ok {
			cost := price.Cost(u)
			out.CostUSD = &cost
		}
		if s.Ledger != nil {
			l := res.Ledger
			out.Ledger = &l
		}
		if res.HitStepLimit {
			out.IsError, out.Reason = true, reasonMaxSteps
		}
		if res.Blocked {
			out.IsError, out.Reason = true, "blocked_by_hook"
		}
	}
	if runErr != nil {
		out.IsError, out.Reason = true, reasonError
		out.Error = runErr.Error()
		if errors.Is(runErr, agent.ErrInterrupted) || interrupted {
			out.Reason = reasonInterrupted
			out.Error = "interrupted; completed steps are saved: resume with harness run --resume " + s.ID
		}
		if budget != nil && budget.reached() && !interrupted {
			out.Reason = reasonBudget
			out.Error = fmt.Sprintf("stopped at $%.6f, over --max-cost $%.6f; completed steps are saved: resume with harness run --resume %s", budget.spent(), maxCost, s.ID)
		}
	}
	return out
}

// writeRunOutput prints the result: the model's text and a closing line
// on stderr, or the JSON result.
func writeRunOutput(stdio Stdio, format, id string, out runResult, stream *streamObserver) {
	if format != "text" {
		writeResult(stdio, format, out, stream)
		return
	}
	if out.Result != "" {
		// The model's text, escaped: a reply can carry escape
		// sequences (OSC 52 sets the clipboard, CSI erases lines).
		fmt.Fprintln(stdio.Out, ui.Visible(strings.TrimRight(out.Result, "\n")))
	}
	// A closing line on stderr: what it cost and how to go on.
	u := out.Usage
	summary := fmt.Sprintf("harness: session %s · %d step(s) · %d tokens", id, out.Steps, u.Input+u.CacheRead+u.CacheWrite+u.Output)
	if out.CostUSD != nil {
		summary += fmt.Sprintf(" · $%.4f", *out.CostUSD)
	}
	fmt.Fprintln(stdio.Err, summary+" · continue with: harness run --resume "+id+" PROMPT")
}

// runExit is the exit status a run's result calls for.
func runExit(out runResult) error {
	if !out.IsError {
		return nil
	}
	msg := out.Error
	if msg == "" {
		msg = "the agent stopped at the step limit (--max-steps) before finishing"
	}
	code := exitFailure
	switch out.Reason {
	case reasonInterrupted:
		code = exitInterrupted
	case reasonApproval:
		code = exitNeedsApproval
	}
	return &ExitError{Code: code, Err: errors.New(msg)}
}

// budgetObserver adds up each reply's cost and stops the run once it
// reaches max. The check is after a reply, so a run can pass max by the
// cost of one reply, never more.
type budgetObserver struct {
	agent.Observer
	price llm.Price
	max   float64
	stop  context.CancelFunc

	mu   sync.Mutex
	cost float64
	hit  bool
}

func (b *budgetObserver) OnReply(r *llm.Reply) {
	b.Observer.OnReply(r)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cost += b.price.Cost(r.Usage)
	if b.cost >= b.max && !b.hit {
		b.hit = true
		b.stop()
	}
}

func (b *budgetObserver) reached() bool  { b.mu.Lock(); defer b.mu.Unlock(); return b.hit }
func (b *budgetObserver) spent() float64 { b.mu.Lock(); defer b.mu.Unlock(); return b.cost }

// writeResult writes the result object of the json and stream-json
// formats (stream nil: not started yet); text has no object.
func writeResult(stdio Stdio, format string, out runResult, stream *streamObserver) {
	switch format {
	case "json":
		enc := json.NewEncoder(stdio.Out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	case "stream-json":
		if stream == nil {
			stream = &streamObserver{enc: json.NewEncoder(stdio.Out)}
		}
		out.Type = "result"
		stream.emit(out)
	}
}

// progressObserver writes one line per tool call and notice to stderr, so
// stdout carries only the answer.
type progressObserver struct {
	w io.Writer
}

func (p *progressObserver) OnEvent(e llm.Event) {
	if e.Type == llm.EventRetry {
		fmt.Fprintf(p.w, "harness: retrying in %s (attempt %d): %v\n", e.Wait.Round(100*time.Millisecond), e.Try, e.Err)
	}
}
func (p *progressObserver) OnToolStart(call llm.Block) {
	fmt.Fprintf(p.w, "⚙ %s  %s\n", ui.Visible(call.Name), ui.Visible(summarizeInput(call)))
}
func (p *progressObserver) OnToolEnd(call, res llm.Block, d time.Duration) {
	switch {
	case res.IsError && strings.HasPrefix(res.Content, "Not run:"):
		// A refusal is shown whole: its end names the flag that admits it.
		fmt.Fprintf(p.w, "  ✗ %s\n", ui.Visible(strings.Join(strings.Fields(res.Content), " ")))
	case res.IsError:
		fmt.Fprintf(p.w, "  ✗ %s\n", ui.Visible(firstLine(res.Content)))
	}
}
func (p *progressObserver) OnReply(*llm.Reply) {}
func (p *progressObserver) OnNotice(n notice.Notice) {
	fmt.Fprintln(p.w, "harness:", ui.Visible(n.Text))
}

// streamObserver writes every event as one JSON line.
type streamObserver struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (s *streamObserver) emit(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.enc.Encode(v)
}

func (s *streamObserver) OnEvent(e llm.Event) {
	switch e.Type {
	case llm.EventText:
		s.emit(map[string]any{"type": "text", "text": e.Text})
	case llm.EventThinking:
		s.emit(map[string]any{"type": "thinking", "text": e.Text})
	case llm.EventRetry:
		s.emit(map[string]any{"type": "retry", "error": e.Err.Error(), "wait_ms": e.Wait.Milliseconds(), "attempt": e.Try})
	}
}
func (s *streamObserver) OnToolStart(call llm.Block) {
	s.emit(map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": call.Input})
}
func (s *streamObserver) OnToolEnd(call, res llm.Block, d time.Duration) {
	s.emit(map[string]any{"type": "tool_result", "tool_use_id": res.ToolUseID, "content": res.Content, "is_error": res.IsError, "elapsed_ms": d.Milliseconds()})
}

// OnLedger writes one request's ledger record.
func (s *streamObserver) OnLedger(r ledger.Record) {
	s.emit(ledgerEvent{Type: "ledger", Record: r})
}

// ledgerEvent is a ledger record as a stream-json line.
type ledgerEvent struct {
	Type string `json:"type"`
	ledger.Record
}

func (s *streamObserver) OnReply(r *llm.Reply) {
	s.emit(map[string]any{"type": "reply", "stop_reason": r.StopReason, "usage": usageJSON{r.Usage.Input, r.Usage.CacheRead, r.Usage.CacheWrite, r.Usage.Output}})
}

// OnNotice writes the notice whole: consumers read its kind and fields
// rather than parse its text.
func (s *streamObserver) OnNotice(n notice.Notice) { s.emit(noticeEvent{Type: "notice", Notice: n}) }

// noticeEvent is a notice as a stream-json line; Agent names a sub-agent.
type noticeEvent struct {
	Type  string `json:"type"`
	Agent string `json:"agent,omitempty"`
	notice.Notice
}

// summarizeInput shows a tool call's main argument in one line.
func summarizeInput(call llm.Block) string {
	var m map[string]any
	if json.Unmarshal(call.Input, &m) != nil {
		return firstLine(string(call.Input))
	}
	for _, k := range []string{"command", "path", "pattern", "name", "description", "prompt"} {
		if v, ok := m[k].(string); ok {
			return firstLine(v)
		}
	}
	return firstLine(string(call.Input))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// subagentLines shows a sub-agent's tool calls as they start, one line
// each, so a long task is visibly at work; its report comes back as the
// task tool's result.
type subagentLines struct {
	label string
	print func(string)
}

func (s *subagentLines) OnEvent(llm.Event)                             {}
func (s *subagentLines) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (s *subagentLines) OnReply(*llm.Reply)                            {}
func (s *subagentLines) OnNotice(n notice.Notice)                      { s.print("  " + s.label + "  " + n.Text) }
func (s *subagentLines) OnToolStart(call llm.Block) {
	s.print(fmt.Sprintf("  %s  ⚙ %s  %s", s.label, call.Name, summarizeInput(call)))
}

// subagentStream writes a sub-agent's tool calls and results as stream-json
// events carrying its label.
type subagentStream struct {
	label string
	s     *streamObserver
}

func (a *subagentStream) OnEvent(llm.Event)  {}
func (a *subagentStream) OnReply(*llm.Reply) {}
func (a *subagentStream) OnNotice(n notice.Notice) {
	a.s.emit(noticeEvent{Type: "notice", Agent: a.label, Notice: n})
}
func (a *subagentStream) OnToolStart(call llm.Block) {
	a.s.emit(map[string]any{"type": "tool_use", "agent": a.label, "id": call.ID, "name": call.Name, "input": call.Input})
}
func (a *subagentStream) OnToolEnd(call, res llm.Block, d time.Duration) {
	a.s.emit(map[string]any{"type": "tool_result", "agent": a.label, "tool_use_id": res.ToolUseID, "content": res.Content, "is_error": res.IsError, "elapsed_ms": d.Milliseconds()})
}

// OnLedger passes a ledger record on.
func (b *budgetObserver) OnLedger(r ledger.Record) { forwardLedger(b.Observer, r) }

// forwardLedger gives r to obs when it shows ledger records.
func forwardLedger(obs agent.Observer, r ledger.Record) {
	if lo, ok := obs.(agent.LedgerObserver); ok {
		lo.OnLedger(r)
	}
}
