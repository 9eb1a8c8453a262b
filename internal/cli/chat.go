package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/ui"
)

// chatCommands are the slash commands, with their one-line help, in the
// order /help lists them.
var chatCommands = []struct{ name, args, help string }{
	{"/help", "", "this list"},
	{"/compact", "[focus]", "summarise the conversation now, keeping what matters for focus"},
	{"/clear", "", "start a new session (the current one stays on disk)"},
	{"/cost", "", "where the money went: session and last turn, by cache tier and kind, with reasons"},
	{"/context", "", "what fills the context window, by kind"},
	{"/todos", "", "the model's current plan"},
	{"/rewind", "[N]", "take back the last N turns (default 1) and the files they changed"},
	{"/undo", "[call|--force]", "set back the files the last turn (or its last call) changed"},
	{"/sessions", "", "this project's sessions"},
	{"/resume", "ID", "switch to an earlier session"},
	{"/model", "NAME", "use another model from the next turn on (!NAME: one the catalogue lacks)"},
	{"/expand", "", "the last tool result, whole"},
	{"/sandbox", "", "the walls in force"},
	{"/network", "", "the connections commands made through the proxy, and the network rules"},
	{"/ps", "[stop ID]", "the background commands; stop ID kills one and all it started"},
	{"/permissions", "", "the permission rules in force"},
	{"/mcp", "[login|logout NAME]", "the MCP servers: state, tools, prompts, resources; log in to a remote one"},
	{"/exit", "", "quit (also Ctrl-D, or Ctrl-C twice)"},
}

// compactMin is the size of the conversation (its messages, estimated)
// below which /compact declines: a handoff summary (Goal, What happened,
// Files, State, Next) takes a couple of hundred tokens itself, so it
// would only grow the history.
const compactMin = 256

// chat is the state of one interactive session.
type chat struct {
	g     *globalOptions
	stdio Stdio
	t     *ui.Term
	in    *ui.Input
	r     *ui.Renderer
	meter *ui.Meter
	ed    *ui.Editor
	pr    *ui.Prompter
	s     *Session
	bell  *ui.Notifier // the bell and desktop notifications

	turnStart time.Time // when the running turn began
	mu        sync.Mutex
	cancel    context.CancelFunc // the running turn's, nil between turns
	step      agent.StepStop     // Esc stops the running step alone (cancel stops the turn)
	keys      keyWatch           // reads Esc and typed-ahead keys during a turn
	besideMu  sync.Mutex         // held while something beside the prompt runs outside the editor
	reading   bool               // the line editor reads the prompt (under mu)
	asides    []aside            // what waits to be shown or asked beside it (under mu)
}

// runChat is the interactive session: banner, then a loop of prompt, slash
// command or agent turn. Ctrl-C during a turn cancels that turn (what
// completed is kept) and returns to the prompt; Ctrl-C twice at an empty
// prompt, Ctrl-D or /exit quits.
func runChat(ctx context.Context, g *globalOptions, stdio Stdio) error {
	// SIGTERM and SIGHUP end the session cleanly: the editor restores the
	// terminal mode on its way out.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	c := &chat{g: g, stdio: stdio, in: ui.NewInput(stdio.stdin())}
	// SIGINT arrives while the terminal is cooked (during a turn): it cancels
	// the turn, and is ignored between turns rather than killing the
	// session. At the prompt the terminal is raw and Ctrl-C is a key.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		for range sig {
			c.cancelTurn()
		}
	}()
	defer func() {
		signal.Stop(sig)
		close(sig)
	}()
	c.t = ui.NewTerm(stdio.Out, os.Getenv)
	c.meter = &ui.Meter{}
	c.r = ui.NewRenderer(c.t, c.meter)
	defer c.r.Close()
	bell, err := newNotifier(c.t)
	if err != nil {
		return err
	}
	c.bell = bell
	c.pr = &ui.Prompter{
		R:           c.r,
		Editor:      ui.NewEditor(c.in, c.t, ui.EditorOptions{NoHistory: true, EscapeInterrupts: true}),
		OnInterrupt: c.cancelTurn,
		OnWait: func(what string) {
			if c.bell.Due(time.Since(c.turnStart)) {
				c.bell.Send("harness", "waiting for your answer ("+what+")")
			}
		},
	}
	stopResize := notifyResize(c.in.Resized)
	defer stopResize()
	if err := c.open(ctx); err != nil {
		return err
	}
	quit := false // the user ended the session: say how to come back
	defer func() {
		c.closing(c.s)
		if quit && c.s.Log.Written() {
			hint := "resume this session with: harness --resume " + c.s.ID
			if c.replied() {
				hint += " (or harness -c, the latest)"
			}
			c.r.Print(c.t.Style.Dim(hint))
		}
		c.s.Close()
	}()
	c.ed = ui.NewEditor(c.in, c.t, ui.EditorOptions{
		HistoryPath: filepath.Join(c.s.Home, ".agents", "history"),
		Completer:   c.completer(),
		Describe:    c.describeCommand,
		OnResize:    c.r.Reflow,
		OnBackTab:   c.cycleMode,
		OnPoke:      c.runAsides,
		Popup:       ui.NewPopup(c.menuSources(), withMCPMentions(c, ui.ProjectFiles(c.s.Sandbox.Policy().Project(), 5000))),
	})
	c.banner(ctx)
	c.watchMCP()

	quit, err = c.loop(ctx)
	return err
}

// loop reads and runs prompts until the user quits (quit) or input ends
// otherwise (err).
func (c *chat) loop(ctx context.Context) (quit bool, err error) {
	interrupted := false
	for {
		c.setReading(true)
		line, err := c.ed.ReadLine(ctx, c.promptText())
		c.setReading(false)
		switch {
		case errors.Is(err, ui.ErrInterrupt):
			if interrupted {
				return true, nil
			}
			interrupted = true
			c.r.Print(c.t.Style.Dim("(Ctrl-C again to quit, or Ctrl-D)"))
			continue
		case errors.Is(err, io.EOF):
			return true, nil
		case err != nil:
			if ctx.Err() != nil {
				// SIGTERM or SIGHUP: the session closes cleanly (deferred
				// in runChat), and the status says it did not end by itself.
				msg := "terminated"
				if c.s.Log.Written() {
					msg += "; the session is saved: harness --resume " + c.s.ID
				}
				return false, &ExitError{Code: exitInterrupted, Err: errors.New(msg)}
			}
			return false, fmt.Errorf("reading input: %w", err)
		}
		interrupted = false
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		shown, cont := strings.Split(ui.Sanitize(line), "\n"), c.t.Style.Dim("… ")
		c.r.RememberFunc(func(w int) string { return ui.Echo(c.t.Style.BoldCyan("› "), cont, shown, w) })
		if c.commandTurn(ctx, line) {
			continue
		}
		if strings.HasPrefix(line, "/") && !isPathPrompt(line) {
			q, err := c.command(ctx, line)
			if err != nil {
				c.r.Print(c.t.Style.Red("error: ") + err.Error())
			}
			if q {
				return true, nil
			}
			continue
		}
		c.turn(ctx, line)
	}
}

// isPathPrompt reports whether a line that starts with / starts with a
// path rather than a command: its first word has another slash in it
// (/home/u/shot.png, what is this?) or names something that exists. No
// command has a slash of its own (a namespaced one is /git:fix).
func isPathPrompt(line string) bool {
	first, _, _ := strings.Cut(line, " ")
	if strings.Contains(first[1:], "/") {
		return true
	}
	_, err := os.Lstat(first)
	return err == nil
}

// replied reports whether the model ever answered in this session: only
// then is it a conversation harness -c takes up (sessionlog.Latest).
func (c *chat) replied() bool {
	for _, m := range c.s.History.Messages() {
		if m.Role == llm.RoleAssistant {
			return true
		}
	}
	return false
}

// open starts (or resumes, per the flags) the session and points the meter
// at it.
func (c *chat) open(ctx context.Context) error {
	s, err := openSession(ctx, c.g, c.stdio, sessionSetup{Prompter: watchedPrompter{c}, Elicit: watchedPrompter{c}.elicit, Approver: c, Reserved: builtinNames(), MCPInBackground: true})
	if err != nil {
		return err
	}
	s.SetNotify(c.r.OnNotice)
	s.SetSubagentObserver(func(label string) agent.Observer {
		return &subagentLines{label: label, print: func(line string) { c.r.Print(c.t.Style.Dim(line)) }}
	})
	c.s = s
	cfg := s.Config
	c.meter.Reset()
	c.meter.Model = cfg.Model
	c.meter.Window = cfg.ContextWindow
	c.meter.Backend = s.Sandbox.Backend()
	c.setPrice(cfg.Model)
	c.meter.Set(s.Agent.LastUsage(), s.Agent.Usage(), 0)
	return nil
}

func (c *chat) setPrice(model string) {
	c.meter.Price, c.meter.PriceKnown = priceFor(c.s.Config, model)
}

func (c *chat) banner(ctx context.Context) {
	s := c.s
	sess := s.ID
	if s.Resumed {
		sess = resumedLine(s.ID, s.Log.Path(), s.History.Len())
	}
	b := ui.Banner{
		Version:  version(),
		Project:  s.Sandbox.Policy().Project(),
		Model:    s.Config.Model,
		Provider: s.Config.Provider,
		BaseURL:  s.Config.BaseURL,
		Backend:  s.Sandbox.Backend(),
		Session:  sess,
	}
	for _, w := range s.Warnings {
		// Without a sandbox the banner says it in its own words, with
		// what to do.
		if w.Kind != notice.SandboxNone {
			b.Warnings = append(b.Warnings, w.Text)
		}
	}
	b.EndpointErr = probeEndpoint(ctx, s.Config.BaseURL)
	c.r.PrintFunc(func(w int) string { return b.Render(c.t.Style, w) })
	if s.Resumed {
		c.printTranscript()
	}
}

// printTranscript shows where a resumed session stands: its summary, if
// it was compacted, and its last exchanges.
func (c *chat) printTranscript() {
	msgs := slices.Clone(c.s.History.Messages())
	c.r.PrintFunc(func(w int) string { return ui.Transcript(c.t.Style, msgs, w, 3) })
}

// probeEndpoint checks that something listens at base's host, so a wrong
// BASE_URL is said at start rather than after the first prompt.
func probeEndpoint(ctx context.Context, base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil
	}
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "http" {
			host += ":80"
		} else {
			host += ":443"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("%s unreachable", host)
	}
	conn.Close()
	return nil
}

// withTurn runs f with a context that Ctrl-C (SIGINT while the terminal is
// cooked, or Ctrl-C at a permission prompt) cancels. It reports whether the turn was interrupted.
func (c *chat) withTurn(ctx context.Context, f func(ctx context.Context) error) (interrupted bool, err error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.turnStart = time.Now()
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
	}()
	restore := c.in.Quiet()
	c.keys.start(c, tctx)
	err = f(agent.WithStepStop(tctx, &c.step))
	interrupted = tctx.Err() != nil && ctx.Err() == nil
	c.keys.stop(c, interrupted)
	restore()
	return interrupted, err
}

// escape is Esc during a turn: it stops the running step (the tool calls
// of one reply) and the model goes on; with no step running (the model
// replies, a retry waits, a compaction runs) it stops the turn, as Ctrl-C.
func (c *chat) escape() {
	if c.step.Stop() {
		c.r.Print(c.t.Style.Dim("⏹ stopped the running call (Esc); the model goes on · Ctrl-C stops the turn"))
		return
	}
	c.cancelTurn()
}

func (c *chat) cancelTurn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// turn runs one agent turn and shows the status line after it.
func (c *chat) turn(ctx context.Context, prompt string) {
	pol := c.s.Sandbox.Policy()
	prompt, notes := attachResources(ctx, prompt, c.s.MCP)
	prompt, images, fileNotes := attachMentions(prompt, pol.Project(), pol.DenyRead(), takesImages(c.s.Config.EnvFile, c.s.Config.Model), func(name string) bool { return isResourceMention(c.s.MCP, name) })
	notes = append(notes, fileNotes...)
	for _, n := range notes {
		c.r.Print(c.t.Style.Dim("@ " + n))
	}
	c.r.StartTurn()
	c.s.Checkpoints.StartTurn()
	var res *agent.Result
	interrupted, err := c.withTurn(ctx, func(ctx context.Context) error {
		var err error
		res, err = c.s.Agent.RunWithImages(ctx, prompt, images, c.r)
		return err
	})
	planned := c.s.Modes.Mode() == extend.ModePlan && !interrupted && err == nil
	c.r.EndTurn(interrupted || errors.Is(err, agent.ErrInterrupted))
	if took := time.Since(c.turnStart); c.bell.Due(took) && !interrupted {
		c.bell.Send("harness", "the turn is done after "+took.Round(time.Second).String())
	}
	switch {
	case err == nil || errors.Is(err, agent.ErrInterrupted) || interrupted:
	default:
		c.r.Print(c.t.Style.Red("error: ") + ui.Sanitize(err.Error()))
	}
	if res != nil && res.HitStepLimit {
		c.r.Print(c.t.Style.Yellow("stopped after " + fmt.Sprint(res.Steps) + " model calls (--max-steps); say \"continue\" to go on"))
	}
	// At the end of every turn: files this turn wrote that other programs
	// run later on the user's machine.
	if w := laterWarning(c.s.LaterRun.Changes()); w != "" {
		c.r.Print(c.t.Style.Red(strings.TrimRight(w, "\n")))
	}
	c.status()
	if planned && res != nil && !res.Blocked && !res.HitStepLimit && strings.TrimSpace(res.Text) != "" {
		c.offerPlan(ctx, res.Text)
	}
}

// sync takes the agent's own usage figures, which include sub-agents,
// compactions and a resumed session's past.
func (c *chat) sync() {
	_, _, n := c.meter.Snapshot()
	c.meter.Set(c.s.Agent.LastUsage(), c.s.Agent.Usage(), n)
	if l := c.s.Ledger; l != nil && l.Len() > 0 {
		// The status line's dollars are the ledger's (each request at
		// its own model's price), the figure /cost explains.
		s := l.Session()
		c.meter.SetLedger(s.USD, s.PriceKnown, l.Turn(l.CurrentTurn()).Short())
	}
	c.meter.SetContext(c.s.History.Tokens())
}

// status prints the status line, then a blank line before the prompt.
// closing warns, before a session ends, of repositories that appeared in it
// and configure code to run (their notices went by as they appeared).
func (c *chat) closing(s *Session) {
	if s == nil || s.Sandbox == nil {
		return
	}
	if w := findingsWarning(s.Sandbox.Policy().Findings()) + laterWarning(s.LaterRun.All()); w != "" {
		c.r.Print(c.t.Style.Red(strings.TrimRight(w, "\n")))
	}
}

func (c *chat) status() {
	c.sync()
	m := c.meter.Frozen() // drawn again after a resize, with these figures
	c.r.PrintFunc(func(w int) string { return m.StatusLine(c.t.Style, w) + "\n\n" })
}

// command runs a slash command; quit reports /exit.
func (c *chat) command(ctx context.Context, line string) (quit bool, err error) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		c.r.Print(c.helpText())
	case "/compact":
		return false, c.compactNow(ctx, arg)
	case "/clear":
		return false, c.clearSession(ctx)
	case "/cost":
		c.sync()
		c.r.Print(c.costReport())
	case "/context":
		c.r.Print(ui.RenderContext(c.t.Style, c.breakdown(), c.t.Width()))
		if d, ok := c.s.Agent.LastDropped(); ok {
			c.r.Print(droppedReport(d))
		}
	case "/todos":
		c.r.Print(c.describeTodos())
	case "/rewind":
		return false, c.rewind(arg)
	case "/undo":
		return false, c.undo(arg)
	case "/sessions":
		return false, c.listSessions()
	case "/resume":
		return false, c.resume(ctx, arg)
	case "/model":
		return false, c.switchModel(arg)
	case "/expand":
		return false, c.expand(ctx, arg)
	case "/sandbox":
		c.r.Print(c.describePolicy())
	case "/network":
		c.r.Print(c.describeNetwork())
	case "/ps":
		c.r.Print(describeJobs(c.s.Jobs, arg))
	case "/permissions":
		c.r.Print(c.describeRules(arg == "all"))
	case "/mcp":
		return false, c.mcpCommand(ctx, arg)
	default:
		return false, fmt.Errorf("unknown command %s; /help lists them", name)
	}
	return false, nil
}

// truncateMiddle shortens s to w columns by cutting its middle: a rule's
// verdict-bearing start and its command's end both stay.
func truncateMiddle(s string, w int) string {
	if ui.StringWidth(s) <= w {
		return s
	}
	return ui.Truncate(s, w/2) + ui.TruncateLeft(s, w-w/2)
}

// shortPath writes a path (possibly with a ":LINE" suffix) under the
// project relative to it, else under the home directory as ~/….
func (c *chat) shortPath(x string) string {
	proj := c.s.Sandbox.Policy().Project()
	if rel, err := filepath.Rel(proj, x); err == nil && filepath.IsAbs(x) && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return c.tilde(x)
}

// tilde writes a path under the home directory as ~/….
func (c *chat) tilde(x string) string {
	if rel, err := filepath.Rel(c.s.Home, x); err == nil && !strings.HasPrefix(rel, "..") {
		return "~/" + rel
	}
	return x
}

// resumedLine names a resumed session in the units of the session lists
// (steps: the model's replies, cost at list price), then how many
// messages the model is given from it.
func resumedLine(id, path string, messages int) string {
	line := "resumed " + id
	entries, err := sessionlog.ReadFile(path)
	if !sessionlog.Readable(err) {
		return line + fmt.Sprintf(" (%s in context)", plural(messages, "message"))
	}
	sum := sessionlog.Summarize(path, entries)
	line += fmt.Sprintf(" (%s, %s tok", plural(sum.Steps, "step"), humanTokens(tokens(sum.Usage)))
	if v, ok := cost(sum); ok {
		line += ", " + usd(v)
	}
	return line + fmt.Sprintf("; %s in context)", plural(messages, "message"))
}

// StringWidthOf is ui.StringWidth, named for the layout code here.
func StringWidthOf(s string) int { return ui.StringWidth(s) }

// listSessions shows this project's latest sessions, marking the current
// one (listed even before it is saved), with the same columns as harness
// sessions: steps, tokens, cost, title. Sessions that never got a reply
// are left out (harness sessions --all lists them). A title takes the
// rest of the row, cut at a word; on a narrow screen it gets a row of its
// own.
func (c *chat) listSessions() error {
	st := c.t.Style
	all, _ := sessionlog.List(sessionlog.Dir(c.s.Home, c.s.Sandbox.Policy().Project()))
	var list []sessionlog.Summary
	hidden := 0
	for _, ss := range all {
		if ss.Started() || ss.ID == c.s.ID {
			list = append(list, ss)
		} else {
			hidden++
		}
	}
	if len(list) > 15 {
		list = list[:15]
	}
	w := c.t.Width()
	var b strings.Builder
	if !c.s.Log.Written() {
		b.WriteString(st.Green("● ") + st.Bold(c.s.ID) + "  " + st.Dim("this session: new, saved once it has a message") + "\n")
	}
	for _, ss := range list {
		mark := "  "
		if ss.ID == c.s.ID {
			mark = st.Green("● ")
		}
		price := "?"
		if v, ok := cost(ss); ok {
			price = usd(v)
		}
		row := fmt.Sprintf("%s%s  %s  %3d steps  %6s tok  %7s", mark, st.Bold(ss.ID), st.Dim(ss.Used.Local().Format("2006-01-02 15:04")),
			ss.Steps, humanTokens(tokens(ss.Usage)), price)
		title := ui.Sanitize(ss.Title)
		if room := w - ui.StringWidth(row) - 3; room >= 20 {
			b.WriteString(row + "  " + ui.TruncateWords(title, room) + "\n")
		} else {
			b.WriteString(row + "\n" + "    " + ui.TruncateWords(title, w-5) + "\n")
		}
	}
	switch {
	case b.Len() == 0:
		b.WriteString(st.Dim("no sessions yet"))
	default:
		b.WriteString(st.Dim("/resume ID switches to one (harness -c resumes the one used last)"))
	}
	if hidden > 0 {
		b.WriteString("\n" + st.Dim(plural(hidden, "session")+" that never got a reply not listed (harness sessions --all lists them)"))
	}
	c.r.Print(b.String())
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// costReport is /cost: the session's ledger and its last turn's, by cache
// tier and kind, with the reasons found; without a ledger, the meter's.
func (c *chat) costReport() string {
	l := c.s.Ledger
	if l == nil || l.Len() == 0 {
		return c.meter.CostReport(c.t.Style)
	}
	var b strings.Builder
	ledger.Write(&b, "session", l.Session())
	if n := l.CurrentTurn(); n > 0 {
		b.WriteString("\n")
		ledger.Write(&b, "last turn", l.Turn(n))
	}
	out := ui.Visible(b.String()) // model names and tool inputs are text from outside
	b.Reset()
	if c.meter.PriceKnown {
		p := c.meter.Price
		b.WriteString(c.t.Style.Dim(fmt.Sprintf("prices per million tokens (%s): input $%g, output $%g, cache read $%g, cache write $%g; every turn: harness sessions show --ledger %s",
			c.meter.Model, p.Input, p.Output, p.CacheRead, p.CacheWrite, c.s.ID)))
	} else {
		b.WriteString(c.t.Style.Dim("price unknown for this model: set PRICE_INPUT and PRICE_OUTPUT (dollars per million tokens) in ~/.agents/env"))
	}
	return out + b.String()
}

// droppedReport tells what the latest compaction removed and where the
// model can read a removed result back.
func droppedReport(d compact.Dropped) string {
	var b strings.Builder
	fmt.Fprintf(&b, "last compaction removed %d message(s), about %s tokens (%d chars), replaced by a summary of %d chars",
		d.Messages, ui.Tokens(d.Tokens), d.Chars, d.SummaryChars)
	if len(d.ToolResults) > 0 {
		fmt.Fprintf(&b, "; %d tool result(s), which the model can read back:", len(d.ToolResults))
		for i, r := range d.ToolResults {
			if i == 10 {
				fmt.Fprintf(&b, "\n  … and %d more (harness sessions show lists them)", len(d.ToolResults)-i)
				break
			}
			where := r.Path
			if where == "" {
				where = "(not kept: too short)"
			}
			fmt.Fprintf(&b, "\n  %s %s %d chars → %s", r.Tool, r.Input, max(r.Chars, r.Original), where)
		}
	}
	return ui.Visible(b.String())
}
