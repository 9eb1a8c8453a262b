package cli

import (
	"os"
	"time"

	"github.com/harness-dev/harness/internal/ui"
)

// menuSources are the lists the / menu shows, in order: the built-in
// commands, then the skills (/NAME asks the model to use one). Custom
// commands and MCP prompts plug in here as sources of their own: each is
// asked again whenever the menu opens, so the current session's are shown.
func (c *chat) menuSources() []ui.CommandSource {
	builtin := func() []ui.MenuItem {
		var out []ui.MenuItem
		for _, cmd := range chatCommands {
			out = append(out, ui.MenuItem{Name: cmd.name, Args: cmd.args, Detail: cmd.help, Source: "built-in"})
		}
		return out
	}
	skills := func() []ui.MenuItem {
		var out []ui.MenuItem
		for _, sk := range c.s.Skills.List() {
			out = append(out, ui.MenuItem{Name: "/" + sk.Name, Args: "[task]", Detail: sk.Description, Source: "skill"})
		}
		return out
	}
	return []ui.CommandSource{builtin, skills}
}

// skillPrompt is the turn /NAME [task] starts for a skill: the model is
// asked to load it (read_skill) and follow it.
func skillPrompt(name, task string) string {
	p := "Use the " + name + " skill (load it with read_skill) for this"
	if task == "" {
		return p + "."
	}
	return p + ": " + task
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
