package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/instructions"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/pricing"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/session"
	"github.com/harness-dev/harness/internal/skills"
	"github.com/harness-dev/harness/internal/subagent"
	"github.com/harness-dev/harness/internal/tools"
)

// Session is everything one conversation runs on, wired together. Both the
// interactive chat and headless run build it here, so they cannot drift.
type Session struct {
	ID       string
	Home     string
	Config   *config.Config
	Sandbox  sandbox.Sandbox
	Gate     *permission.Gate
	Registry *tools.Registry
	History  *history.History
	Log      *session.Log
	Agent    *agent.Agent
	Provider llm.Provider
	Resumed  bool
	Warnings []string
	Todos    *tools.TodoList // the plan of write_todos, shown in the reminder
	Skills   *skills.Set

	notify  func(string)                      // where tool notices go; set by the front end
	subObs  func(label string) agent.Observer // how sub-agents are shown; set by the front end
	cleanup []func()
}

// Close releases the sandbox and the log.
func (s *Session) Close() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

// SetNotify routes loud notices (sandbox tampering) to the front end.
func (s *Session) SetNotify(f func(string)) { s.notify = f }

// SetSubagentObserver routes what sub-agents do to the front end.
func (s *Session) SetSubagentObserver(f func(label string) agent.Observer) { s.subObs = f }

// subagentObserver is what the task tool calls for each sub-agent.
func (s *Session) subagentObserver(label string) agent.Observer {
	if s.subObs == nil {
		return nil
	}
	return s.subObs(label)
}

// sessionSetup are the choices a front end makes about a session.
type sessionSetup struct {
	Prompter permission.Prompter // nil: headless
}

// projectRoot resolves --project: the flag, else the git root of the working
// directory, else the working directory.
func projectRoot(ctx context.Context, flag string) (string, error) {
	dir := flag
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
		// The harness's own git calls never run code planted in a project.
		out, err := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
			"--no-optional-locks", "rev-parse", "--show-toplevel").Output()
		if err == nil {
			if top := strings.TrimSpace(string(out)); top != "" {
				dir = top
			}
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", dir)
	}
	return abs, nil
}

// openSession builds a Session from the flags. It validates the provider
// configuration, so commands that need no model do not call it.
func openSession(ctx context.Context, g *globalOptions, stdio Stdio, su sessionSetup) (*Session, error) {
	src, err := config.FromOS(g.configFlags())
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(src)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	catalogueWindow(cfg, src)
	s := &Session{Home: src.Home, Config: cfg, Warnings: cfg.Warnings}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	proj, err := projectRoot(ctx, g.Project)
	if err != nil {
		return nil, err
	}
	pol, err := sandbox.NewPolicy(sandbox.PolicyOptions{Project: proj, AddDirs: g.AddDirs, Home: src.Home, Timeout: g.Timeout,
		CacheRoot: sandbox.CacheRoot(src.Home, os.Environ())})
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Open(ctx, pol, g.Backend)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.Sandbox = sb
	s.cleanup = append(s.cleanup, func() { sb.Close() })
	if sb.Backend() == "none" {
		s.Warnings = append(s.Warnings, "no sandbox (--sandbox none): commands run directly on this machine and every one needs your approval")
	}

	// The session log: new, or the one being resumed.
	var entries []session.Entry
	var logPath string
	switch {
	case g.Resume != "" || g.Continue:
		logPath, err = findSession(src.Home, pol.Project, g.Resume)
		if err != nil {
			return nil, err
		}
		entries, err = session.ReadFile(logPath)
		if errors.Is(err, session.ErrTornLine) {
			s.Warnings = append(s.Warnings, err.Error())
		} else if err != nil {
			return nil, err
		}
		if len(entries) == 0 || entries[0].Meta == nil {
			return nil, fmt.Errorf("%s is not a harness session log", logPath)
		}
		s.ID = entries[0].Meta.ID
		s.Resumed = true
		if s.Log, err = session.Append(logPath, secrets(cfg)); err != nil {
			return nil, err
		}
	default:
		s.ID = session.NewID()
		logPath = filepath.Join(session.Dir(src.Home, pol.Project), session.FileName(time.Now(), s.ID))
		// Nothing is written before the first message: a session opened
		// and left leaves no file for --continue to pick.
		s.Log = session.CreateLazy(logPath, session.Meta{ID: s.ID, Project: pol.Project, Model: cfg.Model, Provider: cfg.Provider}, secrets(cfg))
	}
	s.cleanup = append(s.cleanup, func() { s.Log.Close() })

	gate, err := permission.New(permission.Options{
		Project:     pol.Project,
		Home:        src.Home,
		Writable:    pol.Writable,
		ReadOnly:    pol.ReadOnly,
		DenyRead:    pol.DenyRead,
		UserFile:    filepath.Join(src.Home, ".agents", "permissions"),
		ProjectFile: filepath.Join(pol.Project, ".agents", "permissions"),
		Allow:       g.Allow,
		Deny:        g.Deny,
		Yolo:        g.Yolo,
		Prompter:    su.Prompter,
		Unsandboxed: sb.Backend() == "none",
		Record: func(r permission.Record) {
			// A record the disk refused stays queued in the log; the agent's
			// next append meets the same failure and stops the turn.
			if err := s.Log.Append(session.Entry{Type: session.TypePermission, Permission: &session.Permission{
				Tool: r.Tool, Command: r.Command, Path: r.Path, Rule: r.Rule, Answer: r.Answer}}); err != nil && s.notify != nil {
				s.notify("could not record a permission decision: " + err.Error())
			}
		},
	})
	if err != nil {
		return nil, err
	}
	s.Gate = gate

	rem := reminder.New(pol.Project, time.Now)
	env := &tools.Env{Sandbox: sb, Wrote: rem.Wrote, Notify: func(msg string) {
		err := s.Log.Append(session.Entry{Type: session.TypeNotice, Text: msg})
		if s.notify != nil {
			s.notify(msg)
			if err != nil {
				s.notify("could not record that notice: " + err.Error())
			}
		}
	}}
	// The plan and the skills are tools of their own; the plan is
	// logged whole on every change so it survives resume and compaction.
	s.Todos = &tools.TodoList{}
	skillSet, skillWarns := skills.Discover(pol.Project, src.Home)
	for _, w := range skillWarns {
		s.Warnings = append(s.Warnings, w.Error())
	}
	s.Skills = skillSet
	recordTodos := func(items []tools.Todo) error {
		raw, err := json.Marshal(items)
		if err != nil {
			return err
		}
		return s.Log.Append(session.Entry{Type: session.TypeTodos, Todos: raw})
	}
	s.Registry = tools.NewRegistry(gateAdapter{gate}, append(tools.Builtins(env),
		&tools.WriteTodos{List: s.Todos, Record: recordTodos},
		&tools.ReadSkill{Skills: skillSet})...)

	if s.Provider, err = newProvider(cfg); err != nil {
		return nil, err
	}

	spill, err := spillDir(s.ID)
	if err != nil {
		return nil, err
	}
	s.cleanup = append(s.cleanup, func() { os.RemoveAll(spill) })
	s.History = history.New(history.Config{
		Cap: cfg.Cap, Stub: cfg.Stub, CompactAt: cfg.CompactAt, CompactTo: cfg.CompactTo,
		Window: cfg.ContextWindow, SpillDir: spill,
	})

	// Instructions and skills are static, so they sit in the
	// cached system prompt; sub-agents share the session but not its
	// window, and get the read-only tool set.
	instr, err := instructions.Load(pol.Project, src.Home)
	if err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	info := agent.PromptInfo{
		Project:      pol.Project,
		Sandbox:      describeSandbox(sb),
		Instructions: instructions.Render(instr),
		Skills:       skillSet.Prompt(),
	}
	system := agent.SystemPrompt(info)
	subInfo := info
	subInfo.SubAgent = true
	histCfg := s.History.Config()
	s.Registry = s.Registry.With(subagent.New(subagent.Config{
		Provider:   s.Provider,
		Model:      cfg.Model,
		System:     agent.SystemPrompt(subInfo),
		Tools:      s.Registry,
		Gate:       gateAdapter{gate},
		NewHistory: func() *history.History { return history.New(histCfg) },
		Log:        s.Log,
		AddUsage:   func(u llm.Usage) { s.Agent.AddUsage(u) },
		Observer:   s.subagentObserver,
		MaxTokens:  cfg.MaxTokens,
		SessionID:  s.ID,
	}))
	maxSteps := g.MaxSteps
	s.Agent = agent.New(agent.Options{
		Provider:  s.Provider,
		Model:     cfg.Model,
		System:    system,
		Tools:     s.Registry,
		History:   s.History,
		Log:       s.Log,
		Reminder:  rem,
		Todos:     s.Todos.Render,
		MaxSteps:  maxSteps,
		MaxTokens: cfg.MaxTokens,
		SessionID: s.ID,
		Thinking:  thinkingOf(cfg),
	})
	if err := s.logPrompt(system, entries); err != nil {
		return nil, err
	}
	if s.Resumed {
		total, err := agent.Restore(s.History, entries)
		if err != nil {
			return nil, err
		}
		s.Agent.SetUsage(total)
		// The plan comes back; calls that were running when
		// harness died get a result saying so, so the history stays valid.
		if err := s.Todos.Restore(session.LastTodos(entries)); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
		if m := session.Unanswered(entries); m != nil {
			s.History.Append(*m)
			if err := s.Log.Append(session.Entry{Type: session.TypeMessage, Message: m}); err != nil {
				return nil, err
			}
			s.Warnings = append(s.Warnings, fmt.Sprintf("the last session stopped while %d tool call(s) ran; the model is told their results were lost", len(m.Blocks)))
		}
	}
	ok = true
	return s, nil
}

// logPrompt records the system prompt and tools when the session starts,
// and on resume when they changed (AGENTS.md, skills or harness itself):
// then the provider's cached prefix is gone for one request, and the user
// is told why the next request costs more.
func (s *Session) logPrompt(system string, entries []session.Entry) error {
	specs := s.Registry.Specs()
	if s.Resumed {
		last := session.LastPrompt(entries)
		if last != nil && last.System == system && reflect.DeepEqual(last.Tools, specs) {
			return nil
		}
		if last != nil {
			s.Warnings = append(s.Warnings, "the system prompt or tools changed since this session was saved (AGENTS.md, skills or harness itself): the provider's cache misses once")
		}
	}
	return s.Log.Append(session.Entry{Type: session.TypePrompt, System: system, Tools: specs})
}

// priceFor is the model's price per million tokens: the catalogue (with
// ~/.agents/models.json) with the PRICE_* settings on top; ok is false when
// it is unknown. A models.json that does not parse leaves the built-in
// catalogue; harness models names the error.
func priceFor(cfg *config.Config, model string) (llm.Price, bool) {
	cat, err := userCatalogue(cfg.EnvFile)
	if err != nil {
		cat = llm.DefaultCatalogue()
	}
	over := func(v float64) *float64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	return pricing.ForIn(cat, model, pricing.Override{
		Input: over(cfg.PriceInput), Output: over(cfg.PriceOutput),
		CacheRead: over(cfg.PriceCacheRead), CacheWrite: over(cfg.PriceCacheWrite),
	})
}

// catalogueWindow takes the model's context window from the catalogue when
// CONTEXT_WINDOW was not set, instead of one default for every model.
// (A CONTEXT_WINDOW in the env file equal to the default is taken as
// unset: config does not say where a value came from.)
func catalogueWindow(cfg *config.Config, src config.Source) {
	if cfg.ContextWindow != config.DefaultContextWindow || src.Env["CONTEXT_WINDOW"] != "" || src.Flags["CONTEXT_WINDOW"] != "" {
		return
	}
	if m, ok := llm.LookupModel(cfg.Model); ok && m.ContextWindow > 0 {
		cfg.ContextWindow = m.ContextWindow
	}
}

// gateAdapter lets the permission gate guard the tool registry.
type gateAdapter struct{ g *permission.Gate }

func (a gateAdapter) Check(ctx context.Context, acc tools.Access) (bool, string) {
	return a.g.Check(ctx, permission.Request{Tool: acc.Tool, Command: acc.Command, Path: acc.Path, Write: acc.Write})
}

func newProvider(cfg *config.Config) (llm.Provider, error) {
	var p llm.Provider
	switch cfg.Provider {
	case "anthropic":
		p = anthropic.New(anthropic.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey})
	default:
		op, err := openai.NewChecked(openai.Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Profile: cfg.OpenAIProfile})
		if err != nil {
			return nil, fmt.Errorf("%w (in %s or the environment)", err, cfg.EnvFile)
		}
		p = op
	}
	return llm.WithRetry(p, llm.RetryOptions{}), nil
}

// secrets are the strings a session log must never contain.
func secrets(cfg *config.Config) []string {
	var out []string
	if cfg.APIKey != "" {
		out = append(out, cfg.APIKey)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "API_KEY"} {
		if v := os.Getenv(k); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// spillDir is where capped tool output goes: a host path outside the project
// (so it never shows up in git status) that the sandbox can read, since it
// may read anywhere but secrets. Not under /tmp, which the sandbox replaces
// with its private one: there, bash could not page the file the marker
// names, so a cache dir under /tmp gives way to a fresh private directory
// in /var/tmp.
func spillDir(id string) (string, error) {
	base, err := os.UserCacheDir()
	if err == nil && !underTmp(base) {
		dir := filepath.Join(base, "harness", "spill", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("creating the spill directory: %w", err)
		}
		return dir, nil
	}
	// MkdirTemp makes a new 0700 directory with a random name, so a shared
	// /var/tmp offers no path to squat on.
	dir, err := os.MkdirTemp("/var/tmp", "harness-spill-"+id+"-")
	if err != nil {
		return "", fmt.Errorf("creating the spill directory: %w", err)
	}
	return dir, nil
}

func underTmp(p string) bool {
	p = filepath.Clean(p)
	return p == "/tmp" || strings.HasPrefix(p, "/tmp/")
}

func describeSandbox(sb sandbox.Sandbox) string {
	if sb.Backend() == "none" {
		return "none: commands run directly on the host (each one is approved by the user)"
	}
	return sb.Backend() + ": read anywhere except secrets, write only the project and a private /tmp, no network; git add/commit/branch work, git config and hooks are read-only and git push is refused (the user pushes)"
}

// findSession returns the log of session id (or a unique id prefix) in
// this project, or the newest one when id is empty.
func findSession(home, project, id string) (string, error) {
	path, err := session.Find(session.Dir(home, project), id)
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
