package app

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// readRules reads a permission rules file once for the session (the
// loopback forwards and the gate see the same bytes), by descriptor. Rules
// grant power, so they come only from where commands cannot write: the
// user's file must lie outside every writable root, links resolved; the
// project's inside its .agents carve-out. One the agent could have
// written is used only with the user's yes; headless, the session does
// not start.
func (b *builder) readRules(pol walls.Source, path string) ([]byte, error) {
	if r, ok := b.rules[path]; ok {
		return r.data, r.err
	}
	data, err := b.readRulesOnce(pol, path)
	if b.rules == nil {
		b.rules = map[string]rulesFile{}
	}
	b.rules[path] = rulesFile{data, err}
	return data, err
}

func (b *builder) readRulesOnce(pol walls.Source, path string) ([]byte, error) {
	return readRules(pol, path, b.o.Prompter, func(n notice.Notice) { b.s.Warnings = append(b.s.Warnings, n) })
}

// RulesReader is readRules for a front end without a session (harness
// sandbox, harness permissions): headless, so a rules file the agent
// could have written is refused, saying how to fix it.
func RulesReader(pol walls.Source) func(path string) ([]byte, error) {
	return func(path string) ([]byte, error) { return readRules(pol, path, nil, nil) }
}

// readRules is the one rule for reading a permission rules file: by
// descriptor, through the policy, and only from where commands cannot
// write; one they could is used only with prompter's yes (nil: refused).
func readRules(src walls.Source, path string, prompter permission.Prompter, warn func(notice.Notice)) ([]byte, error) {
	pol := src.Policy() // one snapshot decides
	data, real, reach, err := settingsReader(pol).ReadFile(path, 1<<20)
	if err != nil {
		return nil, err
	}
	user := !walls.Within(path, pol.Project())
	if user && !reach || !user && !pol.CommandsCanWrite(real) {
		return data, nil
	}
	why := fmt.Sprintf("the permission rules in %s resolve to %s, where commands can write them", path, real)
	if prompter == nil {
		return nil, fmt.Errorf("permission: %s, so harness does not take them headless; make it a regular file outside the project (the user's in ~/.agents, the project's in its .agents), or start harness interactively to approve it for one session", why)
	}
	req := permission.Request{Tool: "permission_rules", Command: "use the rules in " + path + " (" + why + ")"}
	ans, err := prompter.Prompt(context.Background(), req, permission.Decision{Verdict: permission.Ask, Rule: "rules from a file the agent could have written are used only once you approve them"}, path)
	if err != nil {
		return nil, fmt.Errorf("permission: %s; the approval prompt failed: %w", why, err)
	}
	switch ans.Choice {
	case permission.Yes, permission.Session, permission.Always:
		return data, nil
	}
	if warn != nil {
		warn(notice.Warning(notice.Config, why+"; you did not approve them, so this session runs without them"))
	}
	return nil, fs.ErrNotExist
}
