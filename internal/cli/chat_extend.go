package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/ui"
)

// builtinNames are the interactive session's own slash commands, without
// the slash: a custom command of such a name is ignored.
func builtinNames() []string {
	var out []string
	for _, c := range chatCommands {
		out = append(out, strings.TrimPrefix(c.name, "/"))
	}
	return append(out, "quit")
}

// commandTurn runs a turn for a line naming a registered slash command
// (custom command, skill, MCP prompt): the command's front matter holds
// for that turn only (app.StartCommand). It reports whether line named one.
func (c *chat) commandTurn(ctx context.Context, line string) bool {
	name, _, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if e, ok := c.s.Slash.Lookup(name); ok && strings.HasPrefix(line, "/") {
		c.r.Print(c.t.Style.Dim("/" + e.Name + " (" + e.Kind + ": " + c.shortPath(e.Where) + ")"))
	}
	cmd, ok, err := c.s.StartCommand(ctx, line, c)
	if !ok {
		return false
	}
	if err != nil {
		c.r.Print(c.t.Style.Red("error: ") + ui.Sanitize(err.Error()))
		return true
	}
	defer cmd.Done()
	for _, n := range cmd.Notes {
		c.r.Print(c.t.Style.Dim(ui.Sanitize(c.shortText(n))))
	}
	c.turn(ctx, cmd.Prompt)
	return true
}

// shortText writes the paths in s under the project relative to it, and
// those under home as ~/….
func (c *chat) shortText(s string) string {
	s = strings.ReplaceAll(s, c.s.Sandbox.Policy().Project()+string(filepath.Separator), "")
	return strings.ReplaceAll(s, c.s.Home+string(filepath.Separator), "~/")
}

// ApproveGrant asks whether a project command the agent could have
// written may use tools without asking (its allowed-tools), for this
// turn; a yes holds for the session.
func (c *chat) ApproveGrant(ctx context.Context, from string, rules []string) (bool, error) {
	st := c.t.Style
	c.r.Print(st.Yellow(ui.Sanitize(c.shortText(from))+" asks to use, without asking, for its turn:") + "\n  " + ui.Sanitize(strings.Join(rules, "\n  ")) +
		"\n" + st.Dim("the file is in the project, where the agent could have written it"))
	ch, err := c.choose(ctx, "allowed-tools", []ui.Option{
		{Key: 'y', Label: "yes, for this command this session"},
		{Key: 'n', Label: "no: its calls ask as usual"},
	}, 1, "Esc: no")
	if err != nil {
		return false, err
	}
	return ch.Index == 0, nil
}

// promptText is the input prompt; it names a mode other than default.
func (c *chat) promptText() string {
	switch c.s.Modes.Mode() {
	case extend.ModePlan:
		return c.t.Style.Yellow("plan › ")
	case extend.ModeAcceptEdits:
		return c.t.Style.Green("accept edits › ")
	}
	return c.t.Style.BoldCyan("› ")
}

// cycleMode is Shift+Tab: default → acceptEdits → plan → default. Plan
// mode makes the project read-only in the walls from the next command.
func (c *chat) cycleMode() string {
	c.s.Modes.Set(c.s.Modes.Mode().Next())
	return c.promptText()
}

// choose shows a one-key list (arrows, the default highlighted) with the
// keyboard handed to it from the turn's key watch, and notifies that it
// waits when the turn has been long.
func (c *chat) choose(ctx context.Context, what string, opts []ui.Option, def int, esc string) (ui.Chosen, error) {
	c.keys.pause()
	defer c.keys.resume(c)
	c.r.Pause()
	defer c.r.Resume()
	if c.pr.OnWait != nil {
		c.pr.OnWait(what)
	}
	ch, err := c.pr.Editor.ChooseEsc(ctx, opts, def, esc)
	if err == nil {
		c.r.Remember("  " + c.t.Style.BoldCyan("❯") + " " + opts[ch.Index].Label)
	}
	return ch, err
}

// planOptions are the answers to a plan: carry it out asking as usual,
// carry it out with edits allowed, or go on planning.
var planOptions = []ui.Option{
	{Key: 'y', Label: "yes, carry it out (default mode: edits and commands ask)"},
	{Key: 'a', Label: "yes, and allow file edits (acceptEdits mode)"},
	{Key: 'n', Label: "no, keep planning: say what to change"},
}

// offerPlan asks whether the plan a plan-mode turn ended in is accepted:
// yes leaves plan mode (y: default, a: acceptEdits) and starts the turn
// that carries the plan out; no, or Esc, stays in plan mode.
func (c *chat) offerPlan(ctx context.Context, plan string) {
	st := c.t.Style
	c.r.Print(st.Bold("accept this plan?"))
	ch, err := c.choose(ctx, "plan", planOptions, 0, "Esc: keep planning")
	if err != nil || ch.Index == 2 {
		c.r.Print(st.Dim("still in plan mode: say what to change"))
		return
	}
	next := extend.ModeDefault
	if ch.Index == 1 {
		next = extend.ModeAcceptEdits
	}
	c.s.AcceptPlan(plan, next)
	c.r.Print(st.Dim("plan accepted: " + string(c.s.Modes.Mode()) + " mode; carrying it out (Esc stops)"))
	// As Claude Code does: accepting starts the work, in the mode picked.
	c.r.Print(st.BoldCyan("› ") + planGo)
	c.turn(ctx, planGo)
}

// planGo is the prompt of the turn an accepted plan starts (the plan
// itself comes with it: Modes.Accept).
const planGo = "Go ahead: carry out the plan."

// ApproveHook asks the user whether a project hook may run: the
// definition is shown whole, and a yes is remembered for it (its hash).
// No is the default: the file is one the agent could have written.
func (c *chat) ApproveHook(ctx context.Context, h extend.Hook) (bool, error) {
	st := c.t.Style
	c.r.Print(fmt.Sprintf("%s\n  %s %s  matcher %q  timeout %s\n  %s", st.Yellow("a project hook wants to run (it runs inside the sandbox):"),
		st.Dim("from"), c.shortPath(h.Source), h.Matcher, h.Timeout, st.Bold(h.Event+": ")+ui.Sanitize(h.Command)))
	if h.Why != "" {
		c.r.Print("  " + st.Dim("why asked: "+ui.Sanitize(h.Why)))
	}
	for _, p := range h.Scripts {
		// The approval is for these files' content as it is now.
		c.r.Print("  " + st.Dim("runs "+ui.Sanitize(c.shortPath(p.Path))+" (its content now is what you approve)"))
	}
	ch, err := c.choose(ctx, "hook", []ui.Option{
		{Key: 'y', Label: "yes, run it, and remember this definition"},
		{Key: 'n', Label: "no, not this session"},
	}, 1, "Esc stops the turn")
	if errors.Is(err, ui.ErrInterrupt) {
		c.cancelTurn()
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ch.Index == 0, nil
}

// describeExtensions lists, for /help, the custom commands, skills and
// hooks in force and where each came from.
func (c *chat) describeExtensions() string {
	st := c.t.Style
	var b strings.Builder
	// Every registered slash command (custom commands, skills, MCP
	// prompts…), grouped by kind in the order they first appear.
	var kinds []string
	byKind := map[string][]extend.Entry{}
	for _, e := range c.s.Slash.Entries() {
		if _, ok := byKind[e.Kind]; !ok {
			kinds = append(kinds, e.Kind)
		}
		byKind[e.Kind] = append(byKind[e.Kind], e)
	}
	for i, k := range kinds {
		if i == 0 {
			b.WriteString("\n")
		}
		head := st.Bold(k + "s")
		if k == "skill" {
			head += st.Dim(" (/NAME [task] asks the model to use one; it also loads them when it needs them)")
		}
		b.WriteString("\n" + head + "\n")
		for _, e := range byKind[k] {
			name := "/" + e.Name
			if e.Args != "" {
				name += " " + e.Args
			}
			fmt.Fprintf(&b, "  %s  %s %s\n", st.Bold(name), ui.Sanitize(e.Detail), st.Dim("("+c.shortPath(e.Where)+")"))
		}
	}
	if hs := c.s.Hooks.List(); len(hs) > 0 {
		b.WriteString("\n" + st.Bold("hooks") + "\n")
		for _, h := range hs {
			state := ""
			if h.Project && !c.s.Hooks.Approved(h) {
				state = st.Yellow(" [not approved yet: asks before it first runs]")
			}
			scope := "user"
			if h.Project {
				scope = "project"
			}
			m := h.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(&b, "  %s %s  %s%s %s\n", st.Bold(h.Event), m, ui.Sanitize(h.Command), state, st.Dim("("+scope+": "+c.shortPath(h.Source)+")"))
		}
	}
	fmt.Fprintf(&b, "\n%s", st.Dim("permission mode: "+string(c.s.Modes.Mode())))
	return strings.TrimRight(b.String(), "\n")
}
