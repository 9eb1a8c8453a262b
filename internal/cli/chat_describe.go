package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/tools"
	"github.com/harness-dev/harness/internal/ui"
)

// breakdown estimates what fills the context, scaled to the provider's
// measured total when there is one.
func (c *chat) breakdown() ui.Breakdown {
	a := c.s.Agent
	req := a.Request(context.Background())
	b := ui.Breakdown{
		System:    history.EstimateText(req.System),
		Window:    c.s.Config.ContextWindow,
		CompactAt: c.s.Config.CompactAt,
	}
	if tools, err := json.Marshal(req.Tools); err == nil {
		b.Tools = history.EstimateText(string(tools))
	}
	for _, m := range c.s.History.Messages() {
		for _, bl := range m.Blocks {
			switch bl.Type {
			case llm.BlockToolResult:
				b.ToolOutput += history.EstimateText(bl.Content)
			default:
				b.Messages += history.EstimateText(bl.Text + bl.Thinking + string(bl.Input))
			}
		}
	}
	if a.LastUsage().Prompt() > 0 {
		// The measured prompt plus what was added since is the truth; the
		// estimates only say how it splits.
		measured := c.s.History.Tokens()
		if est := b.Total(); est > 0 && measured > 0 {
			f := float64(measured) / float64(est)
			b.System = int(float64(b.System) * f)
			b.Tools = int(float64(b.Tools) * f)
			b.Messages = int(float64(b.Messages) * f)
			b.ToolOutput = int(float64(b.ToolOutput) * f)
			b.Measured = true
		}
	}
	return b
}

func (c *chat) describePolicy() string {
	st := c.t.Style
	p := c.s.Sandbox.Policy()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s — %s\n", st.Bold("sandbox"), c.s.Sandbox.Backend(), ui.DefaultEnforces(c.s.Sandbox.Backend()))
	list := func(name string, xs []string) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(&b, "  %-10s %s\n", name, xs[0])
		for _, x := range xs[1:] {
			fmt.Fprintf(&b, "  %-10s %s\n", "", x)
		}
	}
	home := func(xs []string) []string {
		var out []string
		for _, x := range xs {
			if rel, err := filepath.Rel(c.s.Home, x); err == nil && !strings.HasPrefix(rel, "..") {
				x = "~/" + rel
			}
			out = append(out, x)
		}
		return out
	}
	list("writable", home(p.Writable()))
	list("read-only", home(p.ReadOnly()))
	list("hidden", ui.Wrap(strings.Join(home(p.DenyRead()), "  "), c.t.Width()-13))
	list("env", ui.Wrap(strings.Join(p.EnvAllow(), " "), c.t.Width()-13))
	list("network", c.s.Gate.NetRules())
	fmt.Fprintf(&b, "  %-10s %s per command, %d bytes of output kept", "limits", p.Timeout(), p.OutputLimit())
	if w := c.s.Walls; w.Weaker {
		fmt.Fprintf(&b, "\n  %-10s %s is weaker than %s, the strongest this OS offers (--sandbox strict refuses it)\n", "weaker", w.Backend, w.Strongest)
		list("cannot", w.CannotHold)
		return strings.TrimSuffix(b.String(), "\n")
	}
	return b.String()
}

// describeTodos shows the model's plan (write_todos) with its progress.
func (c *chat) describeTodos() string {
	st := c.t.Style
	var items []tools.Todo
	if c.s.Todos != nil {
		items = c.s.Todos.Items()
	}
	if len(items) == 0 {
		return st.Dim("no plan yet: the model writes one with write_todos for multi-step work")
	}
	var b strings.Builder
	done := 0
	for _, t := range items {
		text := ui.Sanitize(t.Content)
		switch t.Status {
		case tools.TodoCompleted:
			done++
			fmt.Fprintf(&b, "  %s %s\n", st.Green("☑"), st.Dim(text))
		case tools.TodoInProgress:
			if t.ActiveForm != "" {
				text = ui.Sanitize(t.ActiveForm)
			}
			fmt.Fprintf(&b, "  %s %s\n", st.Yellow("▶"), st.Bold(text))
		default:
			fmt.Fprintf(&b, "  ☐ %s\n", text)
		}
	}
	fmt.Fprintf(&b, "%s", st.Dim(fmt.Sprintf("%d of %d done", done, len(items))))
	return b.String()
}

// describeRules lists the rules in force, one a row: verdict, what it
// covers and where it comes from; the user's and the project's in full,
// the built-in defaults counted unless all is set; the walls in short
// (/sandbox lists their paths).
func (c *chat) describeRules(all bool) string {
	st := c.t.Style
	w := c.t.Width()
	var own []string
	count := map[string]int{}
	var walls []string
	row := func(r string) string {
		text, origin, _ := strings.Cut(r, "  (")
		origin = strings.TrimSuffix(origin, ")")
		verdict, rest, _ := strings.Cut(text, " ")
		colour := st.Green
		switch verdict {
		case "ask":
			colour = st.Yellow
		case "deny":
			colour = st.Red
		}
		// The rule is the point of the row: its origin is named short
		// (~/… or relative to the project) and gives way first.
		origin = c.shortPath(origin)
		originW := min(StringWidthOf(origin), max(0, w-10-40))
		if originW > 0 && originW < StringWidthOf(origin) {
			origin = "…" + ui.TruncateLeft(origin, originW-1)
		}
		line := fmt.Sprintf("  %s %s", colour(fmt.Sprintf("%-5s", verdict)), truncateMiddle(rest, max(10, w-originW-10)))
		if origin != "" && originW > 0 {
			line += "  " + st.Dim(origin)
		}
		return line
	}
	for _, r := range c.s.Gate.Rules() {
		switch {
		case strings.HasPrefix(r, "walls:"):
			walls = append(walls, c.describeWalls())
			continue
		case !strings.HasPrefix(r, "allow ") && !strings.HasPrefix(r, "ask ") && !strings.HasPrefix(r, "deny "):
			walls = append(walls, "  "+st.Dim(ui.Truncate(r, w-2)))
			continue
		case strings.HasSuffix(r, "(default)") || strings.Contains(r, "(default for"):
			if all {
				own = append(own, row(r))
			}
			verdict, _, _ := strings.Cut(r, " ")
			count[verdict]++
			continue
		}
		own = append(own, row(r))
	}
	var b strings.Builder
	if len(own) == 0 {
		b.WriteString(st.Dim("no rules of yours or the project's; \"a\" at a prompt adds one to .agents/permissions") + "\n")
	} else {
		b.WriteString(strings.Join(own, "\n") + "\n")
	}
	b.WriteString(strings.Join(walls, "\n") + "\n")
	if !all {
		fmt.Fprintf(&b, "%s", st.Dim(fmt.Sprintf("built-in defaults: %d allow, %d ask, %d deny (/permissions all lists them)",
			count["allow"], count["ask"], count["deny"])))
	}
	return strings.TrimRight(b.String(), "\n")
}

// describeWalls is the walls no rule moves, in two short rows.
func (c *chat) describeWalls() string {
	st := c.t.Style
	p := c.s.Sandbox.Policy()
	var wr []string
	for _, x := range p.Writable() {
		if x == p.Project() {
			wr = append(wr, "the project")
			continue
		}
		wr = append(wr, c.tilde(x))
	}
	return "  " + st.Bold("walls") + " " + st.Dim("(no rule moves them)") + "\n" +
		"    write only under " + ui.Truncate(strings.Join(wr, ", "), max(10, c.t.Width()-22)) + "\n" +
		"    " + fmt.Sprintf("never read %d secret paths", len(p.DenyRead())) + st.Dim(" (/sandbox lists them)")
}
