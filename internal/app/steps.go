package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/instructions"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/llm/responses"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/autorun"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/skills"
	"github.com/harness-dev/harness/internal/subagent"
	"github.com/harness-dev/harness/internal/tools"
)

// builder carries what the steps of Open have built so far.
type builder struct {
	o Options
	s *Session

	project  string
	live     *walls.Live        // the session's rules: the sandbox, the gate and the modes share it
	entries  []sessionlog.Entry // the resumed log; nil for a new session
	reminder *reminder.Builder
	system   string
	info     agent.PromptInfo     // what the system prompt says (late MCP tools rewrite it)
	rules    map[string]rulesFile // the permission rules files, read once
	// late: the eager MCP tools of servers starting beside the session
	// join the tools before the first request (lateMCP).
	late *lateMCP
}

// rulesFile is one permission rules file as the session read it.
type rulesFile struct {
	data []byte
	err  error
}

// policy is the current snapshot of the session's rules.
func (b *builder) policy() *walls.Policy { return b.live.Policy() }

// loadConfig reads the configuration and checks a provider is set up.
func (b *builder) loadConfig(context.Context) error {
	cfg, err := config.Load(b.o.Source)
	if err != nil {
		return err
	}
	if note := DefaultModel(cfg); note != "" {
		b.s.Warnings = append(b.s.Warnings, notice.Info(notice.Config, note))
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	catalogueWindow(cfg, b.o.Source)
	b.s.Config = cfg
	for _, w := range cfg.Warnings {
		b.s.Warnings = append(b.s.Warnings, notice.Warning(notice.Config, w))
	}
	return nil
}

// resolveProject finds the project directory.
func (b *builder) resolveProject(ctx context.Context) error {
	p, err := ProjectRoot(ctx, b.o.Project, b.o.WorkDir)
	b.project = p
	return err
}

// openSandbox computes the policy and opens the backend.
func (b *builder) openSandbox(ctx context.Context) error {
	env := environ(b.o.Source.Env)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: b.project, AddDirs: b.o.AddDirs, Home: b.o.Source.Home, Timeout: b.o.Timeout,
		Environ: env, CacheRoot: walls.CacheRoot(b.o.Source.Home, env), Hide: spillDirs(b.o.CacheDir)})
	if err != nil {
		return err
	}
	backend := b.o.Backend
	if backend == "" || backend == sandbox.BackendAuto || backend == BackendStrict {
		strict := backend == BackendStrict
		backend = sandbox.BackendAuto
		if !strict && b.s.Config != nil && b.s.Config.Sandbox != "" {
			s := b.s.Config.Sandbox
			backend = s // the settings' choice of what auto means (SANDBOX=docker)
		}
	}
	b.live = walls.NewLive(pol)
	s := b.s
	// The proxy asks the gate (built by a later step, before any command
	// runs) and logs every connection; the loopback ports the rules name
	// exactly are forwarded into the walls.
	px, err := permission.NewProxy(b.gateOptions(b.live), func() *permission.Gate { return s.Gate }, func(r netproxy.ConnRecord) {
		// As for a permission record: the log keeps what the disk
		// refused, and the agent's next append stops the turn.
		if s.Log != nil {
			if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: "network: " + r.String()}); err != nil {
				s.tell(logFailed("could not record a network connection", err))
			}
		}
	})
	if err != nil {
		return err
	}
	s.Proxy = px
	getenv := func(k string) string { return b.o.Source.Env[k] }
	sb, err := sandbox.Open(ctx, b.live, backend, sandbox.WithProxy(s.Proxy), sandbox.WithEnv(getenv))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	b.s.Sandbox = sb
	b.s.cleanup = append(b.s.cleanup, func() { sb.Close() })
	b.s.LaterRun = autorun.New(pol.Writable()...)
	b.s.Walls = wallsOf(sb.Backend(), strongest(runtime.GOOS), sandbox.WithEnv(getenv))
	w := b.s.Walls
	if b.o.Backend == BackendStrict && w.Weaker {
		_, why := sandbox.Detect()
		return fmt.Errorf("sandbox: --sandbox strict needs %s, the strongest this OS offers, but only %s is available (%s); it cannot hold: %s",
			orNone(w.Strongest), w.Backend, why, strings.Join(w.CannotHold, "; "))
	}
	switch {
	case sb.Backend() == sandbox.BackendNone:
		b.s.Warnings = append(b.s.Warnings, notice.Warning(notice.SandboxNone, "no sandbox (--sandbox none): commands run directly on this machine and every one needs your approval"))
	case w.Weaker:
		b.s.Warnings = append(b.s.Warnings, notice.Warning(notice.SandboxWeaker, fmt.Sprintf("sandbox %s is weaker than %s, the strongest this OS offers (--sandbox strict refuses to start without it); it cannot hold: %s",
			w.Backend, orNone(w.Strongest), strings.Join(w.CannotHold, "; "))))
	}
	return nil
}

// strongest is the backend with the full walls on goos.
func strongest(goos string) string {
	switch goos {
	case "linux":
		return sandbox.BackendBwrap
	case "darwin":
		return sandbox.BackendSeatbelt
	}
	return ""
}

// wallsOf compares backend, opened with opts, with the strongest one. It
// is weaker only where it cannot hold a rule on this machine: the landlock
// backend with user namespaces and a recent Landlock holds every one, and
// without user namespaces it does not (secrets readable, .git only
// watched), which is the degradation the warning is for.
func wallsOf(backend, best string, opts ...sandbox.Option) Walls {
	w := Walls{Backend: backend, Strongest: best}
	if backend != best {
		w.CannotHold = sandbox.Limits(backend, opts...)
		w.Weaker = len(w.CannotHold) > 0
	}
	return w
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// openLog opens the session log: the one being resumed, or a new one.
func (b *builder) openLog(context.Context) error {
	s, cfg, home, project := b.s, b.s.Config, b.o.Source.Home, b.policy().Project()
	secrets := secrets(cfg, b.o.Source.Env)
	if b.o.Resume != "" || b.o.Continue {
		logPath, err := findSession(home, project, b.o.Resume)
		if err != nil {
			return err
		}
		entries, err := sessionlog.ReadFile(logPath)
		var dmg *sessionlog.DamagedError
		switch {
		case errors.As(err, &dmg):
			s.Warnings = append(s.Warnings, notice.Warning(notice.LogDamaged, err.Error()))
		case errors.Is(err, sessionlog.ErrTornLine):
			s.Warnings = append(s.Warnings, notice.Warning(notice.LogTorn, err.Error()))
		case err != nil:
			return err
		}
		if len(entries) == 0 || entries[0].Meta == nil {
			return fmt.Errorf("%s is not a harness session log", logPath)
		}
		s.ID = entries[0].Meta.ID
		s.Resumed = true
		if s.Log, err = sessionlog.Append(logPath, secrets, sessionlog.WithClock(b.o.now)); err != nil {
			return err
		}
		// Taken up again, it is the conversation the user is in, even if
		// they leave before a word: --continue takes it next.
		if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeResumed}); err != nil {
			return err
		}
		b.entries = entries
	} else {
		s.ID = sessionlog.NewID()
		logPath := filepath.Join(sessionlog.Dir(home, project), sessionlog.FileName(b.o.now(), s.ID))
		// Nothing is written before the first message: a session opened
		// and left leaves no file for --continue to pick.
		s.Log = sessionlog.CreateLazy(logPath, sessionlog.Meta{ID: s.ID, Project: project, Model: cfg.Model, Provider: cfg.Provider}, secrets, sessionlog.WithClock(b.o.now))
	}
	s.cleanup = append(s.cleanup, func() { s.Log.Close() })
	return nil
}

// gateOptions are the rule sources of the session's gate.
func (b *builder) gateOptions(live *walls.Live) permission.Options {
	home := b.o.Source.Home
	return permission.Options{
		Policy:      live,
		Home:        home,
		UserFile:    filepath.Join(home, ".agents", "permissions"),
		ProjectFile: filepath.Join(live.Policy().Project(), ".agents", "permissions"),
		Allow:       b.o.Allow,
		AllowNet:    b.o.AllowNet,
		Deny:        b.o.Deny,
		Yolo:        b.o.Yolo,
		ReadFile:    func(path string) ([]byte, error) { return b.readRules(live, path) },
	}
}

// newGate builds the permission gate, which records every decision.
func (b *builder) newGate(context.Context) error {
	s, pol, home := b.s, b.policy(), b.o.Source.Home
	o := b.gateOptions(b.live)
	o.Prompter = b.prompter()
	o.Unsandboxed = s.Sandbox.Backend() == sandbox.BackendNone
	o.Record = func(r permission.Record) {
		// A record the disk refused stays queued in the log; the agent's
		// next append meets the same failure and stops the turn.
		if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypePermission, Permission: &sessionlog.Permission{
			Tool: r.Tool, Command: r.Command, Path: r.Path, Rule: r.Rule, Answer: r.Answer}}); err != nil {
			s.tell(logFailed("could not record a permission decision", err))
		}
		if b.o.OnDecision != nil {
			b.o.OnDecision(r)
		}
	}
	gate, err := permission.New(o)
	if err != nil {
		return err
	}
	s.Gate = gate
	if gate.LockfilesInForce() {
		// The lockfiles can change between sessions (an agent, a pull):
		// hosts they name that they did not name last time are said.
		added, first, err := permission.LockfileDrift(pol.Project(), filepath.Join(sessionlog.Dir(home, pol.Project()), "lockfile-hosts"))
		switch {
		case err != nil:
			s.Warnings = append(s.Warnings, notice.Warning(notice.Config, "could not compare the lockfiles' hosts with the last session's: "+err.Error()))
		case len(added) > 0 && !first:
			s.Warnings = append(s.Warnings, notice.Warning(notice.Config, fmt.Sprintf("the project's lockfiles name hosts they did not name at your last session, and allow net @lockfiles lets commands reach them: %s; if you did not add them, check the lockfiles' changes", strings.Join(added, ", "))))
		case len(added) > 0:
			s.Warnings = append(s.Warnings, notice.Info(notice.Config, "allow net @lockfiles lets commands reach the hosts the project's lockfiles name: "+strings.Join(added, ", ")))
		}
	}
	return nil
}

// buildTools builds the tool registry: the built-in tools inside the
// sandbox, the plan and the skills, all behind the gate.
func (b *builder) buildTools(context.Context) error {
	s, pol := b.s, b.policy()
	b.reminder = reminder.New(pol.Project(), b.o.now)
	if sb := s.Sandbox; sb.Backend() != sandbox.BackendNone {
		// The per-turn git status runs inside the walls: a filter or
		// fsmonitor the agent configured never runs on the host.
		b.reminder.SetGit(func(ctx context.Context, args []string) ([]byte, error) {
			return sandbox.Git(ctx, sb, pol.Project(), args...)
		})
	}
	// read_file returns images to a model the catalogue says takes them.
	m, _ := llm.LookupModel(s.Config.Model)
	// Background commands end with the session: the cleanups run last
	// first, so they are killed before the sandbox closes.
	s.Jobs = &tools.Jobs{Sandbox: s.Sandbox}
	s.cleanup = append(s.cleanup, s.Jobs.Close)
	env := &tools.Env{Sandbox: s.Sandbox, Wrote: b.reminder.Wrote, Images: m.Images, Jobs: s.Jobs, Notify: func(n notice.Notice) {
		err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: n.Text})
		s.tell(n)
		if err != nil {
			s.tell(logFailed("could not record that notice", err))
		}
	}}
	b.startLSP(env)
	// The plan and the skills are tools of their own; the plan is
	// logged whole on every change so it survives resume and compaction.
	s.Todos = &tools.TodoList{}
	skillSet, skillWarns := skills.Discover(pol.Project(), b.o.Source.Home, policyOpener(pol))
	for _, w := range skillWarns {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Instructions, w.Error()))
	}
	s.Skills = skillSet
	recordTodos := func(items []tools.Todo) error {
		raw, err := json.Marshal(items)
		if err != nil {
			return err
		}
		return s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeTodos, Todos: raw})
	}
	s.Registry = tools.NewRegistry(gateAdapter{s.Gate, s}, append(tools.Builtins(env),
		&tools.WriteTodos{List: s.Todos, Record: recordTodos},
		&tools.ReadSkill{Skills: skillSet})...)
	if b.late == nil || !b.late.eager {
		mcpTools := s.MCP.Tools(mcpLazy(b.o.Source.Env))
		if s.mcpStarts != nil {
			mcpTools = waitingTools(mcpTools, s.mcpStarts, s.MCP.Names())
		}
		s.Registry = s.Registry.With(mcpTools...)
	}
	if s.Proxy != nil {
		// web_fetch leaves through the same proxy as commands: the same
		// net rules, questions, address checks and /network record.
		// A loopback URL is the sandbox's own loopback, where the agent's
		// background servers listen, fetched inside the walls; only where
		// that loopback is not the host's.
		wf := &tools.WebFetch{Proxy: s.Proxy}
		if sandbox.OwnLoopback(s.Sandbox) {
			wf.Sandbox = s.Sandbox
		}
		s.Registry = s.Registry.With(wf)
	}
	s.Registry = s.Registry.With(&tools.BashOutput{Jobs: s.Jobs}, &tools.BashStop{Jobs: s.Jobs})
	return nil
}

// newProvider builds the provider client the configuration names, and
// warns when a local server runs the model with less context than
// CONTEXT_WINDOW.
func (b *builder) newProvider(ctx context.Context) error {
	p, err := NewProvider(b.s.Config)
	b.s.Provider = p
	if err == nil {
		if w := localWindowWarning(ctx, b.s.Config); w != "" {
			b.s.Warnings = append(b.s.Warnings, notice.Warning(notice.Window, w))
		}
	}
	return err
}

// localWindowWarning asks a local OpenAI-compatible server (Ollama,
// llama.cpp) what context it really runs the model with, and says what to
// change when CONTEXT_WINDOW is larger: the server would cut the prompt
// from the front. It waits at most two seconds; a server that does not say
// gives no warning.
func localWindowWarning(ctx context.Context, cfg *config.Config) string {
	if cfg.Provider != "openai" || !openai.IsLocal(cfg.BaseURL) {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w, ok := openai.ProbeWindow(ctx, nil, cfg.BaseURL, cfg.Model)
	if !ok {
		return ""
	}
	return openai.WindowWarning(w, cfg.ContextWindow, cfg.Model, cfg.EnvFile)
}

// newHistory builds the history, with its spill directory.
func (b *builder) newHistory(context.Context) error {
	s, cfg := b.s, b.s.Config
	spill, err := spillDir(spillCache(b.o.CacheDir, b.policy().Writable()), s.ID)
	if err != nil {
		return err
	}
	s.cleanup = append(s.cleanup, func() { os.RemoveAll(spill) })
	b.live.Keep(spill) // every other session's stays hidden
	// Models that check what they are sent get an append-only history
	// (see agent.Options.AppendOnly).
	strategy := history.Harness
	if llm.AppendOnly(cfg.Model, cfg.BaseURL) {
		strategy = history.Append
	}
	// In-turn edits are weighed with the model's own cache prices.
	var price *llm.Price
	if m, ok := llm.LookupModel(cfg.Model); ok {
		price = m.Price
	}
	// The window keeps MAX_TOKENS (the thinking budget is part of it) free
	// for the reply: Anthropic with thinking on and DeepSeek refuse a
	// request whose prompt + max_tokens is over it, so the layers keep the
	// prompt under the rest (history.Config.Reserve: at most half the
	// window; a longer reply limit is lowered per request to fit).
	s.History = history.New(history.Config{
		Cap: cfg.Cap, Stub: cfg.Stub, CompactAt: cfg.CompactAt, CompactTo: cfg.CompactTo,
		Window: cfg.ContextWindow, Reserve: cfg.MaxTokens, SpillDir: spill, Strategy: strategy,
		TrimText: cfg.TrimOldText, Disk: projectDisk{b.live},
		RewriteCost: history.RewriteCostOf(price),
	})
	return nil
}

// buildAgent writes the system prompt and builds the agent, with the
// sub-agent tool.
func (b *builder) buildAgent(context.Context) error {
	s, cfg, pol := b.s, b.s.Config, b.policy()
	// Instructions and skills are static, so they sit in the
	// cached system prompt; sub-agents share the session but not its
	// window, and get the read-only tool set.
	instr, err := instructions.Load(pol.Project(), b.o.Source.Home, policyOpener(pol))
	if err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Instructions, err.Error()))
	}
	info := agent.PromptInfo{
		Project:      pol.Project(),
		Sandbox:      describeSandbox(s.Sandbox),
		Instructions: instructions.Render(instr),
		Skills:       s.Skills.Prompt(),
		// Read once: the prompt stays byte-stable for the cache even
		// when a server restarts with other instructions.
		MCPInstructions: s.MCP.Instructions(),
	}
	b.system, b.info = agent.SystemPrompt(info), info
	subInfo := info
	subInfo.SubAgent = true
	histCfg := s.History.Config()
	s.Ledger = ledger.New(func(model string) (llm.Price, bool) {
		if b.o.Price == nil {
			return llm.Price{}, false
		}
		return b.o.Price(s.Config, model)
	})
	if b.o.Now != nil {
		s.Ledger.Clock = b.o.Now
	}
	task := subagent.New(subagent.Config{
		Provider:   s.Provider,
		Model:      cfg.Model,
		System:     agent.SystemPrompt(subInfo),
		Tools:      s.Registry,
		Gate:       gateAdapter{s.Gate, s},
		NewHistory: func() *history.History { return history.New(histCfg) },
		Log:        s.Log,
		AddUsage:   func(u llm.Usage) { s.Agent.AddUsage(u) },
		Observer:   s.subagentObserver,
		MaxTokens:  cfg.MaxTokens,
		SessionID:  s.ID,
		Hooks:      sessionHooks{s},
		Ledger:     s.Ledger,
	})
	if b.late != nil {
		b.late.task = task // the sub-agents get them too
	}
	s.Registry = s.Registry.With(task)
	// Checkpoints of every call that can write, kept beside the log where
	// no command can read them; a store that cannot open costs undo, not
	// the session.
	sessDir := sessionlog.Dir(b.o.Source.Home, b.policy().Project())
	checkpoint.Prune(filepath.Join(sessDir, "checkpoints"), 30*24*time.Hour)
	if cp, err := checkpoint.Open(checkpoint.Journal(sessDir, s.ID), b.policy().Writable()...); err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Config, "undo is off for this session: "+err.Error()))
	} else {
		s.Checkpoints = cp
		cp.Notify = func(n string) { s.tell(notice.Info(notice.Config, n)) }
		for _, n := range cp.Notes() {
			s.Warnings = append(s.Warnings, notice.Info(notice.Config, n))
		}
		s.Registry.SetCheckpointer(cp)
	}
	s.Agent = agent.New(agent.Options{
		Provider:   s.Provider,
		Model:      cfg.Model,
		System:     b.system,
		Tools:      s.Registry,
		History:    s.History,
		Log:        s.Log,
		Reminder:   b.reminder,
		Todos:      s.Todos.Render,
		MaxSteps:   b.o.MaxSteps,
		MaxTokens:  cfg.MaxTokens,
		SessionID:  s.ID,
		Thinking:   thinkingOf(cfg),
		AppendOnly: llm.AppendOnly(cfg.Model, cfg.BaseURL),
		Hooks:      sessionHooks{s},
		Ledger:     s.Ledger,
		Ready:      b.late.ready,
		OnReminder: func(st reminder.State) {
			if raw, err := json.Marshal(st); err == nil {
				if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeReminder, Reminder: raw}); err != nil {
					s.tell(logFailed("could not record what the reminder told the model", err))
				}
			}
		},
	})
	return nil
}

// logPrompt records the system prompt and tools when the session starts,
// and on resume when they changed (AGENTS.md, skills or harness itself):
// then the provider's cached prefix is gone for one request, and the user
// is told why the next request costs more.
func (b *builder) logPrompt(context.Context) error {
	s := b.s
	if b.late != nil && !b.late.done {
		return nil // once the tools are whole (lateMCP.ready)
	}
	specs := s.Registry.Specs()
	if s.Resumed {
		last := sessionlog.LastPrompt(b.entries)
		if last != nil && last.System == b.system && reflect.DeepEqual(last.Tools, specs) {
			return nil
		}
		if last != nil {
			s.Warnings = append(s.Warnings, notice.Info(notice.PromptChanged, "the system prompt or tools changed since this session was saved (AGENTS.md, skills or harness itself): the provider's cache misses once"))
		}
	}
	return s.Log.Append(sessionlog.Entry{Type: sessionlog.TypePrompt, System: b.system, Tools: specs})
}

// restore replays a resumed log into the history, the usage and the plan;
// calls that were running when harness died get a result saying so, so
// the history stays valid.
func (b *builder) restore(context.Context) error {
	s := b.s
	if !s.Resumed {
		return nil
	}
	total, err := agent.Restore(s.History, b.entries)
	var skipped *agent.SkippedEditsError
	if errors.As(err, &skipped) {
		s.Warnings = append(s.Warnings, notice.Warning(notice.LogDamaged, err.Error()))
	} else if err != nil {
		return err
	}
	// A damaged log may have lost a call or a result anywhere: every
	// tool call must still have its result in the next message, or the
	// provider refuses the whole history. The repair is logged, so the
	// next resume rebuilds the same bytes.
	if ed, ok := s.History.Repair(); ok {
		raw, err := json.Marshal(ed)
		if err != nil {
			return err
		}
		if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeEdit, Edit: raw}); err != nil {
			return err
		}
		s.Warnings = append(s.Warnings, notice.Warning(notice.LogDamaged, fmt.Sprintf("the history from message %d on was repaired: tool calls whose results were lost now say so, results whose calls were lost were removed", ed.Keep+1)))
	}
	s.Agent.SetUsage(total)
	s.Ledger.Load(ledger.FromEntries(b.entries))
	if d, ok := lastDropped(b.entries); ok {
		s.Agent.SetDropped(d)
	}
	// Files changed while harness was not running are reported next.
	if st, ok := agent.LastReminder(b.entries); ok {
		b.reminder.Restore(st)
	}
	if err := s.Todos.Restore(sessionlog.LastTodos(b.entries)); err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.TodosLost, err.Error()))
	}
	if m := sessionlog.Unanswered(b.entries); m != nil {
		s.History.Append(*m)
		if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeMessage, Message: m}); err != nil {
			return err
		}
		s.Warnings = append(s.Warnings, notice.Warning(notice.CallsLost, fmt.Sprintf("the last session stopped while %d tool call(s) ran; the model is told their results were lost", len(m.Blocks))))
	}
	return nil
}

// logFailed is the notice of an entry the log could not take; it is kept
// and written with the next one.
func logFailed(what string, err error) notice.Notice {
	n := notice.Warning(notice.LogFailed, what+": "+err.Error())
	n.Err = err.Error()
	return n
}

// ProjectRoot resolves --project: flag, else the git root of workDir,
// else workDir.
func ProjectRoot(ctx context.Context, flag, workDir string) (string, error) {
	dir := flag
	if dir == "" {
		dir = workDir
		// The harness's own git calls never run code planted in a project.
		out, err := gitsafe.Output(gitsafe.Command(ctx, workDir, "rev-parse", "--show-toplevel"))
		if err == nil {
			if top := strings.TrimSpace(string(out)); top != "" {
				dir = top
			}
		}
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(workDir, dir)
	}
	abs := filepath.Clean(dir)
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", dir)
	}
	return abs, nil
}

// catalogueWindow takes the model's context window from the catalogue when
// CONTEXT_WINDOW was not set, instead of one default for every model.
// (A CONTEXT_WINDOW in the env file equal to the default is taken as
// unset: config does not say where a value came from.)
// DefaultModel sets MODEL, when it is not set and the provider is one's
// own public API (no BASE_URL), to the catalogue's default for that
// provider, and returns the note that says so ("" when it set nothing):
// a user with only a key should not have to look up a model name first.
// A BASE_URL names a server whose models harness cannot know.
func DefaultModel(cfg *config.Config) string {
	if cfg.Model != "" || cfg.BaseURL != "" || cfg.Provider == "" {
		return ""
	}
	m := llm.DefaultCatalogue().DefaultModel(cfg.Provider)
	if m == "" {
		return ""
	}
	cfg.Model = m
	return fmt.Sprintf("MODEL is not set: using %s, harness's default for %s (set MODEL in %s to choose; harness models lists them)", m, cfg.Provider, cfg.EnvFile)
}

func catalogueWindow(cfg *config.Config, src config.Source) {
	if cfg.ContextWindow != config.DefaultContextWindow || src.Env["CONTEXT_WINDOW"] != "" || src.Flags["CONTEXT_WINDOW"] != "" {
		return
	}
	if m, ok := llm.LookupModel(cfg.Model); ok && m.ContextWindow > 0 {
		cfg.ContextWindow = m.ContextWindow
	}
}

// gateAdapter lets the permission gate guard the tool registry. A
// PreToolUse hook's allow or ask, and acceptEdits mode for the file
// tools' writes, reach the gate as an Override (never over a deny).
type gateAdapter struct {
	g *permission.Gate
	s *Session
}

func (a gateAdapter) Check(ctx context.Context, acc tools.Access) (bool, string) {
	req := permission.Request{Tool: acc.Tool, Command: acc.Command, Path: acc.Path, Write: acc.Write, DeclaredReadOnly: acc.ReadOnly}
	switch extend.PermissionOf(ctx) {
	case "allow":
		req.Override, req.OverrideBy = permission.Allow, "PreToolUse hook: allow"
	case "ask":
		req.Override, req.OverrideBy = permission.Ask, "PreToolUse hook"
	default:
		if a.s != nil && a.s.Modes.Mode() == extend.ModeAcceptEdits && acc.Write && acc.Tool != "bash" {
			req.Override, req.OverrideBy = permission.Allow, "acceptEdits mode"
		}
	}
	return a.g.Check(ctx, req)
}

// prompter is the front end's prompter, firing Notification hooks.
func (b *builder) prompter() permission.Prompter {
	if b.o.Prompter == nil {
		return nil
	}
	return notifyingPrompter{p: b.o.Prompter, s: b.s}
}

// NewProvider is the provider client cfg names, with retries.
func NewProvider(cfg *config.Config) (llm.Provider, error) {
	var p llm.Provider
	switch cfg.Provider {
	case "anthropic":
		p = anthropic.New(anthropic.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey})
	default:
		if responses.Use(cfg.WireAPI, cfg.OpenAIProfile, cfg.BaseURL, cfg.Model) {
			rp, err := responses.New(responses.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Store: cfg.ResponsesStore})
			if err != nil {
				return nil, fmt.Errorf("%w (in %s or the environment)", err, cfg.EnvFile)
			}
			p = rp
			break
		}
		op, err := openai.NewChecked(openai.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Profile: cfg.OpenAIProfile})
		if err != nil {
			return nil, fmt.Errorf("%w (in %s or the environment)", err, cfg.EnvFile)
		}
		p = op
	}
	return llm.WithRetry(p, llm.RetryOptions{}), nil
}

// secrets are the strings a session log must never contain.
func secrets(cfg *config.Config, env map[string]string) []string {
	var out []string
	if cfg.APIKey != "" {
		out = append(out, cfg.APIKey)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "API_KEY"} {
		if v := env[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// environ is env as KEY=VALUE strings, sorted.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// spillDir is where capped tool output goes: a host path outside the project
// (so it never shows up in git status) that the sandbox can read, since it
// may read anywhere but secrets. Not under /tmp, which the sandbox replaces
// with its private one: there, bash could not page the file the marker
// names, so a cache dir under /tmp (or none) gives way to a fresh private
// directory in /var/tmp.
// spillCache is cacheDir, unless it lies in a writable root: a command
// could then plant a link where harness makes and later removes the
// session's spill directory, and lead both outside. The spill files then
// go to /var/tmp.
func spillCache(cacheDir string, writable []string) string {
	real := cacheDir
	if r, err := filepath.EvalSymlinks(cacheDir); err == nil {
		real = r
	}
	for _, w := range writable {
		if walls.Within(cacheDir, w) || walls.Within(real, w) {
			return ""
		}
	}
	return cacheDir
}

func spillDir(cacheDir, id string) (string, error) {
	if cacheDir != "" && !underTmp(cacheDir) {
		dir := filepath.Join(cacheDir, "harness", "spill", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("creating the spill directory: %w", err)
		}
		return dir, nil
	}
	base, err := varTmpSpillBase()
	if err != nil {
		return "", fmt.Errorf("creating the spill directory: %w", err)
	}
	// MkdirTemp makes a new 0700 directory with a random name.
	dir, err := os.MkdirTemp(base, id+"-")
	if err != nil {
		return "", fmt.Errorf("creating the spill directory: %w", err)
	}
	return dir, nil
}

// varTmpSpillBase is this user's base of spill directories in /var/tmp:
// one directory that is never removed, so hiding it from commands cannot
// race another session's end (hiding each session's directory did: once a
// hidden directory vanished, bwrap had to create its mount point on the
// read-only root and the sandbox failed to start). A shared /var/tmp lets
// anyone make the name first, so it must be a real directory, 0700 and ours.
func varTmpSpillBase() (string, error) {
	return privateDir(filepath.Join("/var/tmp", fmt.Sprintf("harness-spill-%d", os.Getuid())))
}

// privateDir makes base if it is missing and returns it if it is a real
// directory, 0700 and this user's.
func privateDir(base string) (string, error) {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ownedByMe(fi) {
		return "", fmt.Errorf("%s is not a private directory of this user (a directory, mode 0700, owned by uid %d); remove it", base, os.Getuid())
	}
	return base, nil
}

// spillDirs are every session's spill directories, hidden from commands
// and the file tools (a secret spilled once must not stay readable by every
// later session); the session's own is kept readable once made. The base
// is made now so it can be hidden from the first command.
func spillDirs(cacheDir string) []string {
	var out []string
	if cacheDir != "" && !underTmp(cacheDir) {
		base := filepath.Join(cacheDir, "harness", "spill")
		if os.MkdirAll(base, 0o700) == nil {
			out = append(out, base)
		}
	}
	if base, err := varTmpSpillBase(); err == nil {
		out = append(out, base)
	}
	// Directories older harnesses made one per session, straight in /var/tmp.
	old, _ := filepath.Glob("/var/tmp/harness-spill-*-*")
	return append(out, old...)
}

func underTmp(p string) bool {
	p = filepath.Clean(p)
	return p == "/tmp" || strings.HasPrefix(p, "/tmp/")
}

func describeSandbox(sb sandbox.Sandbox) string {
	if sb.Backend() == sandbox.BackendNone {
		return "none: commands run directly on the host (each one is approved by the user)"
	}
	network := "network only through harness's proxy (HTTPS_PROXY is set; a host no rule allows is refused with a message saying how the user can allow it)"
	if !sandbox.OffersProxy(sb) {
		network = "no network at all (this sandbox offers no proxy here)"
	}
	return sb.Backend() + ": read anywhere except secrets, write only the project and a private /tmp, " + network + "; git add/commit/branch work, git config and hooks are read-only and git push is refused (the user pushes)"
}

// findSession returns the log of session id (or a unique id prefix) in
// this project, or the newest one when id is empty.
func findSession(home, project, id string) (string, error) {
	path, err := sessionlog.Find(sessionlog.Dir(home, project), id)
	if err != nil && id == "" {
		return "", fmt.Errorf("no session to continue in %s; start one with harness", project)
	}
	return path, err
}

// thinkingOf is the reasoning setting a session sends. Anthropic models
// that think by default omit the reasoning text unless asked for a
// summary, which the UI shows dim between tool calls; drop_block rides
// along on preserved-thinking models as a safety net only (the history is
// append-only, see agent.Options.AppendOnly).
func thinkingOf(cfg *config.Config) llm.Thinking {
	t := llm.Thinking{Mode: cfg.Thinking, Budget: cfg.ThinkingBudget, Effort: cfg.Effort}
	if cfg.Provider == "anthropic" && cfg.Thinking != llm.ThinkingOff {
		t.Summarized = cfg.Thinking != "" || llm.PreservedThinking(cfg.Model)
		t.DropBlock = llm.PreservedThinking(cfg.Model)
	}
	return t
}

// policyOpener opens what harness feeds the model (instructions, skills)
// through the sandbox policy: links resolved, secrets refused, regular
// files only, the opened file checked.
func policyOpener(pol walls.Source) func(string) (*os.File, error) {
	return func(path string) (*os.File, error) {
		f, _, _, err := pol.Policy().OpenRead(path)
		return f, err
	}
}

// lastDropped is the latest compaction's report in a session's log.
func lastDropped(entries []sessionlog.Entry) (compact.Dropped, bool) {
	var raw []json.RawMessage
	for _, e := range entries {
		if e.Type == sessionlog.TypeDropped && e.Agent == "" {
			raw = append(raw, e.Dropped)
		}
	}
	return compact.LastDropped(raw)
}

// The store is told what each command wrote (tools.CommandCheckpointer).
var _ tools.CommandCheckpointer = (*checkpoint.Store)(nil)
