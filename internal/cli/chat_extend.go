package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// customCommand expands a line naming a custom command (package extend),
// an MCP server's prompt among them: "" when that failed (said here).
func (c *chat) customCommand(ctx context.Context, line string) (string, bool) {
	p, cmd, ok, err := c.s.Commands.Run(ctx, line)
	if ok {
		c.r.Print(c.t.Style.Dim("/" + cmd.Name + " (" + cmd.Where() + ")"))
	}
	if err != nil {
		c.r.Print(c.t.Style.Red("error: ") + ui.Sanitize(err.Error()))
		return "", true
	}
	return p, ok
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

// offerPlan asks whether the plan a plan-mode turn ended in is accepted:
// yes leaves plan mode (y: default, a: acceptEdits) and the next turn
// carries the plan; no stays in plan mode.
func (c *chat) offerPlan(ctx context.Context, plan string) {
	st := c.t.Style
	for {
		ask := st.Bold("accept this plan? ") + st.Dim("[y: yes · a: yes, and accept edits · n: keep planning] ")
		line, err := c.pr.Editor.ReadLine(ctx, ask)
		if err != nil {
			return
		}
		c.r.Remember(ask + ui.Sanitize(line))
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			c.s.AcceptPlan(plan, extend.ModeDefault)
		case "a":
			c.s.AcceptPlan(plan, extend.ModeAcceptEdits)
		case "n", "no", "":
			c.r.Print(st.Dim("still in plan mode: say what to change"))
			return
		default:
			continue
		}
		c.r.Print(st.Dim("plan accepted: " + string(c.s.Modes.Mode()) + " mode; the next turn carries it out (say go)"))
		return
	}
}

// ApproveHook asks the user whether a project hook may run: the
// definition is shown whole, and a yes is remembered for it (its hash).
func (c *chat) ApproveHook(ctx context.Context, h extend.Hook) (bool, error) {
	st := c.t.Style
	c.r.Pause()
	defer c.r.Resume()
	box := fmt.Sprintf("%s\n  %s %s  matcher %q  timeout %s\n  %s\n", st.Yellow("a project hook wants to run (it runs inside the sandbox):"),
		st.Dim("from"), h.Source, h.Matcher, h.Timeout, st.Bold(h.Event+": ")+ui.Sanitize(h.Command))
	io.WriteString(c.t.Out, box)
	c.r.Remember(box)
	for {
		ask := st.Bold("run it? ") + st.Dim("[y: yes, and remember this definition · n: not this session] ")
		line, err := c.pr.Editor.ReadLine(ctx, ask)
		if errors.Is(err, ui.ErrInterrupt) {
			c.cancelTurn()
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
	}
}

// describeExtensions lists, for /help, the custom commands, skills and
// hooks in force and where each came from.
func (c *chat) describeExtensions() string {
	st := c.t.Style
	var b strings.Builder
	if cs := c.s.Commands.List(); len(cs) > 0 {
		b.WriteString("\n\n" + st.Bold("custom commands") + "\n")
		for _, cmd := range cs {
			fmt.Fprintf(&b, "  %s %s  %s %s\n", st.Bold("/"+cmd.Name), cmd.ArgumentHint, cmd.Description, st.Dim("("+c.tilde(cmd.Where())+")"))
		}
	}
	if sk := c.s.Skills.List(); len(sk) > 0 {
		b.WriteString("\n" + st.Bold("skills") + st.Dim(" (the model loads them when it needs them)") + "\n")
		for _, s := range sk {
			fmt.Fprintf(&b, "  %s  %s %s\n", st.Bold(s.Name), s.Description, st.Dim("("+s.Scope+": "+c.tilde(s.Path)+")"))
		}
	}
	if hs := c.s.Hooks.List(); len(hs) > 0 {
		b.WriteString("\n" + st.Bold("hooks") + "\n")
		for _, h := range hs {
			state := ""
			if h.Project && !c.s.Hooks.Approved(h) {
				state = st.Yellow(" [not approved yet: asks before it first runs]")
			}
			m := h.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(&b, "  %s %s  %s%s %s\n", st.Bold(h.Event), m, ui.Sanitize(h.Command), state, st.Dim("("+c.tilde(h.Where())+")"))
		}
	}
	fmt.Fprintf(&b, "\n%s", st.Dim("permission mode: "+string(c.s.Modes.Mode())))
	return strings.TrimRight(b.String(), "\n")
}
