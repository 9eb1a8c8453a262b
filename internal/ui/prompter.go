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
// or path, the rule that matched, and the answers as a list read one key
// at a time (Editor.Choose on the shared Input, so typed-ahead keystrokes
// are not lost): yes once, for the session, always, all edits this
// session, no, or no with a reason typed for the model.
type Prompter struct {
	R      *Renderer
	Editor *Editor // reads the answer; should have NoHistory set
	// OnInterrupt is called when the user presses Ctrl-C (or Esc) at the
	// prompt: the call is refused and the interactive loop cancels the
	// turn.
	OnInterrupt func()
	// OnWait is called when a prompt starts waiting for the user (the
	// front end may ring the bell or notify the desktop).
	OnWait func(what string)

	allEdits bool // "all edits this session" was chosen
}

var _ permission.Prompter = (*Prompter)(nil)

// The things an answer of the list does.
type promptAct int

const (
	actYes promptAct = iota
	actSession
	actAlways
	actAllEdits
	actView
	actNo
	actReason
)

// isEdit reports whether req is a file tool's write (edit_file,
// write_file), which "all edits this session" covers; a shell command's
// write is not one.
func isEdit(req permission.Request) bool {
	return req.Write && req.Tool != "bash" && req.Tool != "net"
}

// permissionOptions are the answers offered for req, with what each does.
func permissionOptions(req permission.Request, pattern string, canView bool) ([]Option, []promptAct) {
	opts := []Option{{Key: 'y', Label: "yes, once"}}
	acts := []promptAct{actYes}
	if pattern != "" {
		p := Sanitize(pattern)
		opts = append(opts, Option{Key: 's', Label: "yes, for this session: " + p},
			Option{Key: 'a', Label: "yes, always: " + p + " (saved in .agents/permissions)"})
		acts = append(acts, actSession, actAlways)
	}
	if isEdit(req) {
		opts = append(opts, Option{Key: 'e', Label: "yes, and allow all edits this session"})
		acts = append(acts, actAllEdits)
	}
	if canView {
		opts = append(opts, Option{Key: 'v', Label: "view the whole change"})
		acts = append(acts, actView)
	}
	opts = append(opts, Option{Key: 'n', Label: "no"}, Option{Key: 'r', Label: "no, and tell the model why…", Typed: true})
	acts = append(acts, actNo, actReason)
	return opts, acts
}

// Prompt implements permission.Prompter. For edit_file and write_file the
// box shows what would change (the diff, the content), for bash which
// part of the command needs the approval; v opens the whole diff in a
// pager when the box shows only part of it. Once "all edits this
// session" was chosen, file edits are allowed without a prompt (the
// walls still decide where a write may land).
func (p *Prompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	t := p.R.t
	if ctx.Err() != nil {
		// The turn was stopped on the way here (Esc during a hook): no
		// box for a question nobody can answer.
		return permission.Answer{Choice: permission.No, Reason: "the user interrupted the turn"}, nil
	}
	if p.allEdits && isEdit(req) {
		p.R.Print(t.Style.Dim("  allowed (all edits this session): " + Sanitize(req.Path)))
		return permission.Answer{Choice: permission.Yes}, nil
	}
	p.R.Pause()
	defer p.R.Resume()
	call, _ := p.R.RunningCall(req.Tool, req.Path)
	pv := p.previewFor(req, d, pattern, call, t.Width())
	io.WriteString(t.Out, renderPermission(t.Style, req, d, pattern, t.Width(), pv))
	// What the prompt shows is drawn again after a resize (the box at the
	// new width).
	p.R.RememberFunc(func(w int) string {
		return renderPermission(t.Style, req, d, pattern, w, p.previewFor(req, d, pattern, call, w))
	})
	say := func(s string) {
		for _, l := range Wrap(s, t.Width()-2) {
			io.WriteString(t.Out, "  "+t.Style.Dim(l)+"\n")
			p.R.Remember("  " + t.Style.Dim(l))
		}
	}
	if p.OnWait != nil {
		p.OnWait("permission")
	}
	opts, acts := permissionOptions(req, pattern, pv.Full != nil)
	for {
		ch, err := p.Editor.Choose(ctx, opts, 0)
		switch {
		case errors.Is(err, ErrInterrupt):
			if p.OnInterrupt != nil {
				p.OnInterrupt()
			}
			return permission.Answer{Choice: permission.No, Reason: "the user interrupted the turn"}, nil
		case err != nil:
			return permission.Answer{Choice: permission.No}, fmt.Errorf("reading the answer: %w", err)
		}
		label := opts[ch.Index].Label
		if ch.Text != "" {
			label = "no: " + Sanitize(ch.Text)
		}
		if acts[ch.Index] != actView {
			p.R.Remember("  " + t.Style.BoldCyan("❯") + " " + label)
		}
		switch acts[ch.Index] {
		case actView:
			if err := Page(ctx, p.Editor.in, t, pv.Full); err != nil {
				say("(the pager failed: " + err.Error() + ")")
			}
			continue
		case actYes:
			return permission.Answer{Choice: permission.Yes}, nil
		case actSession:
			say("allowed until harness exits: " + Sanitize(pattern))
			return permission.Answer{Choice: permission.Session}, nil
		case actAlways:
			say("saved: allow " + Sanitize(pattern) + " (in .agents/permissions)")
			return permission.Answer{Choice: permission.Always}, nil
		case actAllEdits:
			p.allEdits = true
			say("file edits are allowed until harness exits; commands still ask")
			return permission.Answer{Choice: permission.Yes}, nil
		case actReason:
			return permission.Answer{Choice: permission.No, Reason: ch.Text}, nil
		default:
			return permission.Answer{Choice: permission.No}, nil
		}
	}
}

// previewRows is how many rows of a change the prompt box can show: the
// screen's height less the box's other rows, the list of answers (as
// wide as it is drawn), the tool's line above the box and the cursor's
// row below the list.
func (p *Prompter) previewRows(req permission.Request, d permission.Decision, pattern string, width int) int {
	st := p.R.t.Style
	box := strings.Count(renderPermission(st, req, d, pattern, width, Preview{}), "\n")
	opts, _ := permissionOptions(req, pattern, true)
	list := strings.Count(renderOptions(st, opts, 0, width, "Esc stops the turn"), "\n")
	return max(6, p.R.t.Height()-box-list-2)
}

// allRows asks the preview for every row it has.
const allRows = 1 << 20

// previewFor is what the box shows of what call would change: all of
// it when it fits the rows left (previewRows), else the changed rows in
// view, with as much context as fits; v shows the whole of it.
func (p *Prompter) previewFor(req permission.Request, d permission.Decision, pattern string, call llm.Block, width int) Preview {
	pv := p.preview(req, call, width, allRows)
	all := pv.Short
	if pv.Full != nil {
		all = pv.Full
	}
	n := p.previewRows(req, d, pattern, width)
	if len(all) <= n {
		return Preview{Short: all}
	}
	return Preview{Short: changedInView(p.R.t.Style, all, n), Full: all}
}

// preview shows what call (the one behind req, when found) would do, in
// a box width columns wide, in at most rows rows.
func (p *Prompter) preview(req permission.Request, call llm.Block, width, rows int) Preview {
	st := p.R.t.Style
	switch {
	case call.Name != req.Tool:
	case req.Tool == "edit_file":
		return EditPreview(st, req.Path, call.Input, width-2, rows)
	case req.Tool == "write_file":
		return WritePreview(st, req.Path, call.Input, width-2, rows)
	}
	return Preview{}
}

// changedInView cuts a preview's rows (a summary row, then the change)
// to n, keeping the changed rows in view rather than the head and tail:
// from the first changed row (with context before it when there is
// room) on, the summary saying how many rows are above and a last row
// how many below. A preview without a changed row (a new file's
// content) keeps its head.
func changedInView(st Style, all []string, n int) []string {
	n = max(n, 3)
	first, last := -1, -1
	for i, r := range all[1:] {
		if changedRow(r) {
			if first < 0 {
				first = i + 1
			}
			last = i + 1
		}
	}
	if first < 0 {
		first, last = 1, 1
	}
	for last+1 < len(all) && isContinuation(all[last+1]) {
		last++ // the rest of a wrapped changed line
	}
	room := n - 2 // the summary and the row that says what is below
	from := first
	if span := last - first + 1; span < room {
		// Context before the change, up to half of what is left.
		from = max(1, first-(room-span)/2)
	}
	to := min(len(all), from+room)
	if to == len(all) {
		// Nothing below: the row for it shows more above instead.
		from = max(1, len(all)-(n-1))
	}
	out := []string{all[0]}
	if from > 1 {
		out[0] += st.Dim(fmt.Sprintf(" · %d rows above not shown", from-1))
	}
	out = append(out, all[from:to]...)
	if to < len(all) {
		out = append(out, st.Dim(fmt.Sprintf("     ⋯ %d more rows (v shows the whole of it)", len(all)-to)))
	}
	return out
}

// changedRow reports a removed or added line's first row in a preview
// ("  12 - text", "  12 + text"; EditPreview's and WritePreview's rows).
func changedRow(row string) bool {
	s := StripANSI(row)
	return len(s) > 6 && (s[5] == '-' || s[5] == '+') && s[6] == ' '
}

// isContinuation reports the second and later rows of a wrapped line (no
// line number).
func isContinuation(row string) bool {
	s := StripANSI(row)
	return len(s) > 5 && strings.TrimSpace(s[:5]) == ""
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
	case strings.HasPrefix(req.Tool, "mcp__") && strings.HasSuffix(req.Tool, "__@sampling"):
		title += "  let an MCP server use the model (sampling)"
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
		for _, l := range wrapLine(st.Bold(Sanitize(req.Command)), max(width-2, 8)) {
			b.WriteString(bar + l + "\n")
		}
	case strings.HasPrefix(req.Tool, "mcp__") || req.Tool == "mcp_server":
		// The tool (or server) and its arguments (or command), as sent.
		// A sampling request's summary is several lines: each its own.
		b.WriteString(bar + st.Bold(Sanitize(req.Tool)) + "\n")
		for _, l := range strings.Split(Sanitize(req.Command), "\n") {
			for _, r := range cutStyled(l, max(width-2, 8)) {
				b.WriteString(bar + r + "\n")
			}
		}
	default:
		for _, l := range cutStyled(st.Bold(Sanitize(req.Tool))+"  "+st.Cyan(Sanitize(req.Path)), max(width-2, 8)) {
			b.WriteString(bar + l + "\n")
		}
		for _, l := range pv.Short {
			b.WriteString(bar + l + "\n")
		}
	}
	if d.Rule != "" {
		for _, l := range Wrap("rule: "+Sanitize(d.Rule), max(width-2, 10)) {
			b.WriteString(bar + st.Dim(l) + "\n")
		}
	}
	b.WriteString(st.Yellow("╰ ") + st.Bold("allow?") + "\n")
	return b.String()
}
