package cli

import (
	"context"
	"github.com/harness-dev/harness/internal/mcp"
	"os"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/ui"
)

// menuSources are the lists the / menu shows, in order: the built-in
// commands, then every entry of the session's slash registry (custom
// commands, skills, MCP prompts: whatever registers with
// extend.Registry). Both are asked again whenever the menu opens, so the
// current session's are shown (after /clear too).
func (c *chat) menuSources() []ui.CommandSource {
	builtin := func() []ui.MenuItem {
		var out []ui.MenuItem
		for _, cmd := range chatCommands {
			out = append(out, ui.MenuItem{Name: cmd.name, Args: cmd.args, Detail: cmd.help, Source: "built-in"})
		}
		return out
	}
	registered := func() []ui.MenuItem {
		var out []ui.MenuItem
		for _, e := range c.s.Slash.Entries() {
			out = append(out, ui.MenuItem{Name: "/" + e.Name, Args: e.Args, Detail: e.Detail, Source: e.Kind})
		}
		return out
	}
	return []ui.CommandSource{builtin, registered}
}

// completer completes the built-in and registered slash commands in the
// first word, paths elsewhere.
func (c *chat) completer() ui.Completer {
	return func(line string, pos int) []string {
		var names []string
		for _, cmd := range chatCommands {
			names = append(names, cmd.name)
		}
		for _, e := range c.s.Slash.Entries() {
			names = append(names, "/"+e.Name)
		}
		paths := ui.PathCompleter(c.s.Sandbox.Policy().Project(), c.s.Home)
		return ui.CommandCompleter(names, func(line string, pos int) []string {
			if vals, ok := c.promptArgs(line, pos); ok {
				return vals
			}
			return paths(line, pos)
		})(line, pos)
	}
}

// promptArgs completes an argument of an MCP prompt's command
// (/mcp__SERVER__PROMPT ARGS) by asking its server (completion/complete,
// at most mcp.CompleteTimeout); ok is false for any other line, and for
// a server that offers no completions, so paths are completed instead.
func (c *chat) promptArgs(line string, pos int) ([]string, bool) {
	head := string([]rune(line)[:pos])
	cmd, typed, found := strings.Cut(head, " ")
	if !found || !strings.HasPrefix(cmd, "/"+mcp.Prefix) {
		return nil, false
	}
	p, ok := c.s.MCP.PromptByCommand(cmd[1:])
	if !ok {
		return nil, false
	}
	vals, err := c.s.MCP.CompletePrompt(context.Background(), p, strings.TrimLeft(typed, " "))
	if err != nil {
		return nil, false
	}
	return vals, true
}

// describeCommand is a completion candidate's one-line description.
func (c *chat) describeCommand(name string) string {
	for _, cmd := range chatCommands {
		if cmd.name == name {
			return strings.TrimSpace(cmd.args + "  " + cmd.help)
		}
	}
	if e, ok := c.s.Slash.Lookup(strings.TrimPrefix(name, "/")); ok {
		return strings.TrimSpace(e.Args + "  " + e.Detail)
	}
	return ""
}

// newNotifier reads HARNESS_NOTIFY (auto, bell, osc9, osc777 or off) and
// HARNESS_NOTIFY_AFTER (a duration: turns shorter than it are not
// notified).
func newNotifier(t *ui.Term) (*ui.Notifier, error) {
	var after time.Duration
	if v := os.Getenv("HARNESS_NOTIFY_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, usageError("HARNESS_NOTIFY_AFTER is %q: give a duration such as 30s or 2m", v)
		}
		after = max(d, time.Nanosecond)
	}
	n, err := ui.NewNotifier(t, os.Getenv, os.Getenv("HARNESS_NOTIFY"), after)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return n, nil
}
