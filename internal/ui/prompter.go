package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
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
	// OnInterrupt is called when the user presses Ctrl-C (or Esc, with
	// the Editor's EscapeInterrupts) at the prompt:
	// the call is refused and the interactive loop cancels the turn.
	OnInterrupt func()
}

var _ permission.Prompter = (*Prompter)(nil)

// Prompt implements permission.Prompter. For edit_file and write_file the
// box shows what would change (the diff, the content), for bash which
// part of the command needs the approval; v opens the whole diff in a
// pager when the box shows only part of it.
func (p *Prompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	t := p.R.t
	p.R.Pause()
	defer p.R.Resume()
	call, _ := p.R.RunningCall(req.Tool, req.Path)
	pv := p.preview(req, call, t.Width())
	io.WriteString(t.Out, renderPermission(t.Style, req, d, pattern, t.Width(), pv))
	// What the prompt shows is drawn again after a resize (the box at the
	// new width).
	p.R.RememberFunc(func(w int) string { return renderPermission(t.Style, req, d, pattern, w, p.preview(req, call, w)) })
	say := func(s string) {
		io.WriteString(t.Out, s+"\n")
		p.R.Remember(s)
	}
	keys := "y/n"
	if pattern != "" {
		keys += "/a/s"
	}
	if pv.Full != nil {
		keys += "/v"
	}
	for {
		ask := t.Style.Bold("allow? ") + t.Style.Dim("["+keys+"] ")
		line, err := p.Editor.ReadLine(ctx, ask)
		if err == nil {
			p.R.Remember(ask + Sanitize(line))
		}
		switch {
		case errors.Is(err, ErrInterrupt):
			if p.OnInterrupt != nil {
				p.OnInterrupt()
			}
			return permission.Answer{Choice: permission.No, Reason: "the user interrupted the turn"}, nil
		case err != nil:
			return permission.Answer{Choice: permission.No}, fmt.Errorf("reading the answer: %w", err)
		}
		if v := strings.ToLower(strings.TrimSpace(line)); pv.Full != nil && (v == "v" || v == "view") {
			if err := Page(ctx, p.Editor.in, t, pv.Full); err != nil {
				say(t.Style.Dim("  (the pager failed: " + err.Error() + ")"))
			}
			continue
		}
		ans, ok := ParseAnswer(line, pattern)
		if ok {
			switch ans.Choice {
			case permission.Always:
				say(t.Style.Dim("  saved: allow " + pattern + " (in .agents/permissions)"))
			case permission.Session:
				say(t.Style.Dim("  allowed until harness exits: " + pattern))
			}
			return ans, nil
		}
		help := "  y to allow once, n to refuse"
		if pattern != "" {
			help += ", a to always allow, s to allow for this session"
		}
		if pv.Full != nil {
			help += ", v to view the whole change"
		}
		say(t.Style.Dim(help + ", or type why not"))
	}
}

// previewRows is how many rows of a change the prompt box shows: the rest
// of the screen, minus the box's own lines and the answer.
func (p *Prompter) previewRows() int { return max(6, p.R.t.Height()-10) }

// preview shows what call (the one behind req, when found) would do, in
// a box width columns wide.
func (p *Prompter) preview(req permission.Request, call llm.Block, width int) Preview {
	st := p.R.t.Style
	switch {
	case call.Name != req.Tool:
	case req.Tool == "edit_file":
		return EditPreview(st, req.Path, call.Input, width-2, p.previewRows())
	case req.Tool == "write_file":
		return WritePreview(st, req.Path, call.Input, width-2, p.previewRows())
	}
	return Preview{}
}

// ParseAnswer reads a typed answer: y/yes, n/no, a/always and s/session
// (only when a pattern is offered; otherwise they mean yes), or any other
// text, which refuses with that text as the reason given to the model. An
// empty answer is not accepted (ok false) so a stray Enter decides nothing.
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
	case "s", "session":
		if pattern == "" {
			return permission.Answer{Choice: permission.Yes}, true
		}
		return permission.Answer{Choice: permission.Session}, true
	case "n", "no":
		return permission.Answer{Choice: permission.No}, true
	}
	return permission.Answer{Choice: permission.No, Reason: s}, true
}

// RenderPermission is the prompt's box: what would run, why it asks, and
// the choices.
func RenderPermission(st Style, req permission.Request, d permission.Decision, pattern string, width int) string {
	return renderPermission(st, req, d, pattern, width, Preview{})
}

func renderPermission(st Style, req permission.Request, d permission.Decision, pattern string, width int, pv Preview) string {
	var b strings.Builder
	bar := st.Yellow("│ ")
	title := "permission"
	switch {
	case req.Tool == "bash":
		title += "  run a command"
	case req.Tool == "edit_file":
		title += "  edit a file"
	case req.Tool == "net":
		title += "  connect to the network (the command waits)"
	case strings.HasPrefix(req.Tool, "mcp__"):
		title += "  call an MCP server's tool"
	case req.Tool == "mcp_server":
		title += "  start an MCP server this project defines"
	case req.Write:
		title += "  write a file"
	default:
		title += "  read a file"
	}
	b.WriteString(st.Yellow("╭ ") + st.Bold(title) + "\n")
	switch {
	case req.Tool == "bash":
		parts := AskingParts(req.Command, d.Pattern())
		compound := len(parts) > 0 && (len(parts) > 1 || strings.TrimSpace(parts[0]) != strings.TrimSpace(req.Command))
		shown := Highlight(st, "sh", req.Command)
		if compound {
			// The parsed command with the part that asks standing out.
			shown = markAsking(st, Sanitize(req.Command), askingSpans(Sanitize(req.Command), d.Pattern()))
		}
		for _, l := range strings.Split(shown, "\n") {
			for _, r := range cutStyled(l, max(width-2, 8)) {
				b.WriteString(bar + r + "\n")
			}
		}
		if compound {
			// Say in words which part asks, for a screen without colour.
			for _, part := range parts {
				b.WriteString(bar + st.Yellow("▲ asks: ") + st.Bold(Truncate(oneLine(Sanitize(part)), max(width-10, 8))) + "\n")
			}
		}
	case req.Tool == "net":
		b.WriteString(bar + st.Bold(Sanitize(req.Command)) + "\n")
	case strings.HasPrefix(req.Tool, "mcp__") || req.Tool == "mcp_server":
		// The tool (or server) and its arguments (or command), as sent.
		b.WriteString(bar + st.Bold(Sanitize(req.Tool)) + "\n")
		for _, r := range cutStyled(Sanitize(req.Command), max(width-2, 8)) {
			b.WriteString(bar + r + "\n")
		}
	default:
		b.WriteString(bar + st.Bold(Sanitize(req.Tool)) + "  " + st.Cyan(Sanitize(req.Path)) + "\n")
		for _, l := range pv.Short {
			b.WriteString(bar + l + "\n")
		}
	}
	if d.Rule != "" {
		b.WriteString(bar + st.Dim("rule: "+Sanitize(d.Rule)) + "\n")
	}
	choices := []string{st.Green("y") + " yes, once", st.Red("n") + " no"}
	if pattern != "" {
		choices = append(choices, st.Cyan("a")+" always allow "+st.Bold(Sanitize(pattern)), st.Cyan("s")+" yes for this session")
	}
	if pv.Full != nil {
		choices = append(choices, st.Cyan("v")+" view all")
	}
	choices = append(choices, "or type a reason to refuse")
	// Whole choices to a row: "s yes for this session" never breaks.
	sep := st.Dim(" · ")
	row, rowW := "", 0
	lead := st.Yellow("╰ ")
	for _, c := range choices {
		cw := StringWidth(c)
		if rowW > 0 && rowW+3+cw > width-2 {
			b.WriteString(lead + row + "\n")
			lead, row, rowW = "  ", "", 0
		}
		if rowW > 0 {
			row += sep
			rowW += 3
		}
		row += c
		rowW += cw
	}
	b.WriteString(lead + row + "\n")
	return b.String()
}
