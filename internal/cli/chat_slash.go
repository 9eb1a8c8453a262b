package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/ui"
)

// The slash commands that take more than a line, one method each;
// chat.command dispatches to them.

// helpText is /help: the commands in aligned columns, then the keys.
func (c *chat) helpText() string {
	st := c.t.Style
	var b strings.Builder
	col := 0
	for _, cmd := range chatCommands {
		col = max(col, len(cmd.name)+1+len(cmd.args)+1) // two spaces at least before the text
	}
	for _, cmd := range chatCommands {
		// Pad the plain text: escape codes have no width on screen.
		pad := max(0, col-len(cmd.name)-1-len(cmd.args))
		fmt.Fprintf(&b, "  %s %s%s %s\n", st.Bold(cmd.name), cmd.args, strings.Repeat(" ", pad), st.Dim(cmd.help))
	}
	b.WriteString(st.Dim("  \\ then Enter, Ctrl-J or Alt-Enter: new line · Tab: complete (@path mentions a file) · Up/Down: history · Ctrl-R: search it\n"))
	b.WriteString(st.Dim("  Esc: stop the running step (the model goes on) · Ctrl-C: stop the turn (twice at an empty prompt: quit) · Ctrl-D: quit · /expand: the last tool result whole\n"))
	b.WriteString(st.Dim("  Shift+Tab: permission mode (default → acceptEdits → plan)"))
	b.WriteString(c.describeExtensions())
	return b.String()
}

// compactNow is /compact [focus]: a summary now, unless there is too
// little to summarise.
func (c *chat) compactNow(ctx context.Context, focus string) error {
	st := c.t.Style
	if c.s.History.Len() == 0 {
		c.r.Print(st.Dim("nothing to compact yet: the session has no messages"))
		return nil
	}
	if n := c.s.History.MessageTokens(); n < compactMin {
		c.r.Print(st.Dim(fmt.Sprintf("nothing to compact: the conversation is about %s tokens, less than its summary would take", humanTokens(n))))
		return nil
	}
	c.r.StartTurn()
	interrupted, err := c.withTurn(ctx, func(ctx context.Context) error {
		return c.s.Agent.Compact(ctx, focus, c.r)
	})
	c.r.EndTurn(interrupted)
	if err != nil && !interrupted {
		return fmt.Errorf("compaction failed: %w", err)
	}
	c.status()
	return nil
}

// clearSession is /clear: a new session; the old one stays on disk if it
// had a message.
func (c *chat) clearSession(ctx context.Context) error {
	old := c.s
	g := *c.g
	g.Resume, g.Continue = "", false
	c.g = &g
	if err := c.open(ctx); err != nil {
		c.s = old
		return err
	}
	c.closing(old)
	old.Close()
	kept := "; the previous one is kept (/sessions lists it, harness -c resumes it)"
	if !old.Log.Written() {
		kept = "; the previous one had no message and was not saved"
	}
	c.r.Print(c.t.Style.Dim("new session " + c.s.ID + kept))
	c.watchMCP()
	return nil
}

// rewind is /rewind [N]: the last N turns taken back, with the files
// they changed.
func (c *chat) rewind(arg string) error {
	st := c.t.Style
	n, err := countArg(arg, "/rewind takes a number of turns, not %q")
	if err != nil {
		return err
	}
	prompt, taken, err := c.s.Agent.Rewind(n)
	if err != nil {
		return fmt.Errorf("/rewind: %w", err)
	}
	c.r.Print(st.Dim(fmt.Sprintf("took back %d turn(s), from: %s", taken, ui.Truncate(strings.ReplaceAll(prompt, "\n", " "), 60))))
	// Code and conversation together: the files those turns changed.
	if res, err := c.s.Checkpoints.UndoTurns(taken, checkpoint.Options{}); err != nil {
		c.r.Print(st.Yellow("files not restored: " + err.Error()))
	} else if len(res.Undone) > 0 {
		c.r.Print(st.Dim(res.Describe(c.s.Sandbox.Policy().Writable())))
	}
	return nil
}

// countArg is a command's optional count (1 when absent); bad is the
// error's format for anything but a positive number.
func countArg(arg, bad string) (int, error) {
	if arg == "" {
		return 1, nil
	}
	v, err := strconv.Atoi(arg)
	if err != nil || v < 1 {
		return 0, fmt.Errorf(bad, arg)
	}
	return v, nil
}

// undo is /undo [call] [--force].
func (c *chat) undo(arg string) error {
	sel, o, err := checkpoint.ParseUndoWords(arg)
	if err != nil {
		return err
	}
	res, err := c.s.Checkpoints.Undo(sel, o)
	if err != nil {
		return fmt.Errorf("/undo: %w", err)
	}
	c.r.Print(res.Describe(c.s.Sandbox.Policy().Writable()))
	return nil
}

// resume is /resume ID: switch to an earlier session of the project.
func (c *chat) resume(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("/resume needs a session id; /sessions lists them")
	}
	if strings.HasPrefix(c.s.ID, id) && c.s.Log.Written() {
		// Its log is this process's to write: a second writer would
		// be refused (one writer per log), and there is nothing to do.
		c.r.Print(c.t.Style.Dim("already in session " + c.s.ID))
		return nil
	}
	old := c.s
	g := *c.g
	g.Resume, g.Continue = id, false
	prev := c.g
	c.g = &g
	if err := c.open(ctx); err != nil {
		c.s, c.g = old, prev
		return err
	}
	c.closing(old)
	old.Close()
	c.r.Print(c.t.Style.Dim(resumedLine(c.s.ID, c.s.Log.Path(), c.s.History.Len())))
	c.printTranscript()
	c.watchMCP()
	c.status()
	return nil
}

// switchModel is /model [NAME]: show the model, or use NAME from the
// next turn on (!NAME for one the catalogue lacks).
func (c *chat) switchModel(name string) error {
	st := c.t.Style
	if name == "" {
		c.r.Print("model " + st.Bold(c.s.Config.Model) + st.Dim(" (/model NAME switches)"))
		return nil
	}
	if _, known := llm.LookupModel(name); !known && !strings.HasPrefix(name, "!") {
		return fmt.Errorf("/model: %q is not in the model catalogue (harness models lists it); "+
			"for a model only your server knows, type /model !%s", name, name)
	}
	name = strings.TrimPrefix(name, "!")
	opts := c.s.Agent.Options()
	opts.Model = name
	a := agent.New(opts)
	a.SetUsage(c.s.Agent.Usage())
	c.s.Agent = a
	c.s.Config.Model = name
	c.meter.Model = name
	c.setPrice(name)
	note := ""
	if !c.meter.PriceKnown {
		note = st.Dim(" (price unknown: set PRICE_INPUT and PRICE_OUTPUT to see costs)")
	}
	c.r.Print("model " + st.Bold(name) + " from the next turn on" + note)
	return nil
}

// expand is /expand [N]: the Nth last tool result whole, paged when it
// is taller than the screen.
func (c *chat) expand(ctx context.Context, arg string) error {
	n, err := countArg(arg, "/expand takes how many results back (1 is the last), not %q")
	if err != nil {
		return err
	}
	call, res, ok := c.r.LastResult(n)
	if !ok {
		return fmt.Errorf("/expand: no tool result %d back in this session", n)
	}
	head := ui.ToolLine(c.t.Style, call, c.t.Width())
	body := strings.Split(strings.TrimRight(ui.Sanitize(res.Content), "\n"), "\n")
	if c.in.IsTerminal() && c.t.TTY && len(body) > c.t.Height()-4 {
		return ui.Page(ctx, c.in, c.t, append([]string{head, ""}, body...))
	}
	c.r.Print(head + "\n" + strings.Join(body, "\n"))
	return nil
}
