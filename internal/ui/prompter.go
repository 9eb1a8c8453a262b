package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/permission"
)

// Prompter asks the user about a tool call whose decision is Ask. It
// implements permission.Prompter: it shows the exact command (highlighted)
// or path, the rule that matched, and the choices, then reads the answer
// with a line editor on the shared Input, so the answer can be edited and
// typed-ahead keystrokes are not lost.
type Prompter struct {
	R      *Renderer
	Editor *Editor // reads the answer; should have NoHistory set
	// OnInterrupt is called when the user presses Ctrl-C at the prompt:
	// the call is refused and the interactive loop cancels the turn.
	OnInterrupt func()
}

var _ permission.Prompter = (*Prompter)(nil)

// Prompt implements permission.Prompter.
func (p *Prompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	t := p.R.t
	p.R.Pause()
	defer p.R.Resume()
	io.WriteString(t.Out, RenderPermission(t.Style, req, d, pattern, t.Width()))
	for {
		line, err := p.Editor.ReadLine(ctx, t.Style.Bold("allow? ")+t.Style.Dim("[y/n/a] "))
		switch {
		case errors.Is(err, ErrInterrupt):
			if p.OnInterrupt != nil {
				p.OnInterrupt()
			}
			return permission.Answer{Choice: permission.No, Reason: "the user interrupted the turn"}, nil
		case err != nil:
			return permission.Answer{Choice: permission.No}, fmt.Errorf("reading the answer: %w", err)
		}
		ans, ok := ParseAnswer(line, pattern)
		if ok {
			if ans.Choice == permission.Always {
				io.WriteString(t.Out, t.Style.Dim("  saved: allow "+pattern+" (in .agents/permissions)")+"\n")
			}
			return ans, nil
		}
		io.WriteString(t.Out, t.Style.Dim("  y to allow once, n to refuse, a to always allow, or type why not")+"\n")
	}
}

// ParseAnswer reads a typed answer: y/yes, n/no, a/always (only when a
// pattern is offered; otherwise it means yes), or any other text, which
// refuses with that text as the reason given to the model. An empty
// answer is not accepted (ok false) so a stray Enter decides nothing.
func ParseAnswer(line, pattern string) (ans permission.Answer, ok bool) {
	s := strings.TrimSpace(line)
	switch strings.ToLower(s) {
	case "":
		return permission.Answer{}, false
	case "y", "yes":
		return permission.Answer{Choice: permission.Yes}, true
	case "a", "always":
		if pattern == "" {
			return permission.Answer{Choice: permission.Yes}, true
		}
		return permission.Answer{Choice: permission.Always}, true
	case "n", "no":
		return permission.Answer{Choice: permission.No}, true
	}
	return permission.Answer{Choice: permission.No, Reason: s}, true
}

// RenderPermission is the prompt's box: what would run, why it asks, and
// the choices.
func RenderPermission(st Style, req permission.Request, d permission.Decision, pattern string, width int) string {
	var b strings.Builder
	bar := st.Yellow("│ ")
	title := "permission"
	switch {
	case req.Tool == "bash":
		title += "  run a command"
	case req.Write:
		title += "  write a file"
	default:
		title += "  read a file"
	}
	b.WriteString(st.Yellow("╭ ") + st.Bold(title) + "\n")
	switch {
	case req.Tool == "bash":
		for _, l := range strings.Split(Highlight(st, "sh", req.Command), "\n") {
			b.WriteString(bar + l + "\n")
		}
	default:
		b.WriteString(bar + st.Bold(Sanitize(req.Tool)) + "  " + st.Cyan(Sanitize(req.Path)) + "\n")
	}
	if d.Rule != "" {
		b.WriteString(bar + st.Dim("rule: "+Sanitize(d.Rule)) + "\n")
	}
	choices := []string{st.Green("y") + " yes, once", st.Red("n") + " no"}
	if pattern != "" {
		choices = append(choices, st.Cyan("a")+" always allow "+st.Bold(Sanitize(pattern)))
	}
	choices = append(choices, "or type a reason to refuse")
	b.WriteString(st.Yellow("╰ ") + strings.Join(choices, st.Dim(" · ")) + "\n")
	return b.String()
}
