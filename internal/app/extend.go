package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// loadExtensions reads the custom commands and hooks (package extend) and
// sets the permission mode: plan mode makes the project read-only in the
// walls from the first command on.
func (b *builder) loadExtensions(context.Context) error {
	s, pol, home := b.s, b.policy(), b.o.Source.Home
	mode, err := extend.ParseMode(b.o.PermissionMode)
	if err != nil {
		return err
	}
	s.Modes = extend.NewModes(b.live, mode)
	reserved := map[string]bool{}
	for _, r := range b.o.ReservedCommands {
		reserved[r] = true
	}
	cmds, warns := extend.DiscoverCommands(pol.Project(), home, policyOpener(b.live), reserved)
	for _, w := range warns {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Instructions, w.Error()))
	}
	// A command file that resolves where commands write is the agent's,
	// whatever directory names it.
	cmds.Distrust(func(p string) bool { return b.policy().Reachable(p) }, func(p string) bool { return b.policy().CommandsCanWrite(p) })
	s.Commands = cmds
	cmds.SetDynamic(mcpCommands(s.MCP))
	// The slash commands beyond the front end's own, from one registry:
	// custom commands, then skills; MCP prompts and the like register
	// here too (s.Slash.Register) and reach the / menu, /help, Tab and
	// "harness run '/name args'" alike.
	s.Slash = extend.NewRegistry(b.o.ReservedCommands...)
	s.Slash.Register(extend.CommandSource(cmds))
	s.Slash.Register(skillSource(s))
	var approver extend.Approver
	if b.o.HookApprover != nil {
		approver = b.o.HookApprover
	}
	hooks, warns := extend.NewHooks(extend.HookOptions{
		Project:      pol.Project(),
		Files:        extend.DefaultSettingsFiles(pol.Project(), home, b.o.Settings),
		Required:     b.o.Settings,
		Read:         settingsReader(b.live),
		Sandbox:      s.Sandbox,
		Env:          environ(b.o.Source.Env),
		SessionID:    s.ID,
		Transcript:   func() string { return s.Log.Path() },
		Mode:         func() string { return string(s.Modes.Mode()) },
		Approver:     approver,
		AllowProject: b.o.AllowProjectHooks,
		ApprovalFile: filepath.Join(home, ".agents", "hooks-approved"),
	})
	for _, w := range warns {
		for _, f := range b.o.Settings {
			if strings.Contains(w.Error(), f) {
				return fmt.Errorf("--settings: %w", w)
			}
		}
		s.Warnings = append(s.Warnings, notice.Warning(notice.Hook, w.Error()))
	}
	s.Hooks = hooks
	b.followMode()
	return nil
}

// settingsReader reads the files that grant power (settings, approvals,
// the scripts hooks run) through the sandbox policy: by descriptor, with
// the opened file's real path, which decides whether commands can write it.
func settingsReader(pol walls.Source) extend.Reader {
	return extend.Reader{
		Open: func(path string) (*os.File, string, error) {
			f, real, _, err := pol.Policy().OpenRead(path)
			return f, real, err
		},
		Reach: func(path string) bool { return pol.Policy().Reachable(path) },
	}
}

// startHooks fires SessionStart; what the hooks say goes with the first
// prompt.
func (b *builder) startHooks(ctx context.Context) error {
	s := b.s
	src := "startup"
	if s.Resumed {
		src = "resume"
	}
	o := s.Hooks.Fire(ctx, extend.Event{Name: extend.SessionStart, Source: src})
	for _, n := range o.Notices {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Hook, n))
	}
	s.startContext = o.Context
	s.endArmed = true
	s.cleanup = append(s.cleanup, func() {
		// SessionEnd may not block; its notices have nowhere left to go.
		ctx, cancel := context.WithTimeout(context.Background(), extend.DefaultHookTimeout)
		defer cancel()
		s.Hooks.Fire(ctx, extend.Event{Name: extend.SessionEnd, Source: s.endReason()})
	})
	return nil
}

// sessionHooks are the hooks as the agent fires them, with what the
// session adds to the prompt: SessionStart's context (once) and the
// mode's (the planning note, an accepted plan).
type sessionHooks struct{ s *Session }

func (h sessionHooks) Fire(ctx context.Context, ev extend.Event) extend.Outcome {
	o := h.s.Hooks.Fire(ctx, ev)
	if ev.Name == extend.UserPromptSubmit && !o.Block {
		h.s.mu.Lock()
		start := h.s.startContext
		h.s.startContext = ""
		h.s.mu.Unlock()
		o.Context = joinText(start, o.Context, h.s.Modes.TurnContext())
	}
	return o
}

func joinText(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "\n\n"
		}
		out += p
	}
	return out
}

// AcceptPlan takes the plan of a plan-mode turn as accepted: the session
// switches to next (default or acceptEdits) and the next turn carries it
// (the chat starts that turn at once).
func (s *Session) AcceptPlan(plan string, next extend.Mode) { s.Modes.Accept(plan, next) }

// SetEndReason says why the session ends, for SessionEnd hooks (Claude
// Code's reasons: clear, logout, prompt_input_exit, other).
func (s *Session) SetEndReason(r string) {
	s.mu.Lock()
	s.end = r
	s.mu.Unlock()
}

func (s *Session) endReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == "" {
		return "other"
	}
	return s.end
}

// notifyingPrompter fires Notification hooks before a permission prompt,
// as Claude Code does ("Claude needs your permission to use Bash").
type notifyingPrompter struct {
	p permission.Prompter
	s *Session
}

func (n notifyingPrompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	// A server's start timeout does not run while its question waits.
	defer n.s.pausedStarts()()
	if n.s.Hooks != nil {
		n.s.Hooks.Fire(ctx, extend.Event{Name: extend.Notification, Source: "permission_prompt",
			Message: "harness needs your permission to use " + extend.ToolName(req.Tool)})
	}
	return n.p.Prompt(ctx, req, d, pattern)
}
