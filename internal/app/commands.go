package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
)

// skillSource lists the session's skills as slash commands: /NAME [task]
// asks the model to load the skill and follow it.
func skillSource(s *Session) extend.Source {
	return func() []extend.Entry {
		var out []extend.Entry
		for _, sk := range s.Skills.List() {
			name := sk.Name
			out = append(out, extend.Entry{
				Name: name, Args: "[task]", Detail: sk.Description, Kind: "skill", Where: sk.Path,
				Expand: func(_ context.Context, task string) (extend.Turn, error) {
					return extend.Turn{Prompt: SkillPrompt(name, task)}, nil
				},
			})
		}
		return out
	}
}

// SkillPrompt is the turn /NAME [task] starts for a skill: the model is
// asked to load it (read_skill) and follow it.
func SkillPrompt(name, task string) string {
	p := "Use the " + name + " skill (load it with read_skill) for this"
	if task == "" {
		return p + "."
	}
	return p + ": " + task
}

// GrantApprover asks the user whether a command from a file the agent
// could have written may use tools without asking (its allowed-tools).
type GrantApprover interface {
	ApproveGrant(ctx context.Context, from string, rules []string) (bool, error)
}

// Command is a slash command's turn, made ready: Prompt is what the model
// gets, Notes are for the user, and Done undoes what the command's front
// matter set for the turn (its model, its allowed tools).
type Command struct {
	Prompt string
	Notes  []string
	Done   func()
}

// StartCommand expands line when it names a registered slash command
// (custom command, skill, MCP prompt) and applies the command's front
// matter for one turn, as Claude Code does:
//
//   - model: the turn runs on that model when the catalogue knows it as
//     one of the session's provider; otherwise the session's model, said.
//   - allowed-tools: the tools and commands listed are allowed without
//     asking for the turn (ClaudeRules says how they read), never over a
//     deny rule or the walls. From a file out of the agent's reach (the
//     user's, the project's .agents) they apply at once; from one the
//     agent could have written (.claude/commands in the project) only once
//     the user approves them (ap), and headless not at all, said.
//
// ok is false when line names no registered command.
func (s *Session) StartCommand(ctx context.Context, line string, ap GrantApprover) (c Command, ok bool, err error) {
	t, _, ok, err := s.Slash.Start(ctx, line)
	if !ok || err != nil {
		return Command{}, ok, err
	}
	c = Command{Prompt: t.Prompt, Done: func() {}}
	var undo []func()
	c.Done = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if t.Model != "" {
		note, restore := s.turnModel(t.Model, t.From)
		if restore != nil {
			undo = append(undo, restore)
		}
		if note != "" {
			c.Notes = append(c.Notes, note)
		}
	}
	if len(t.AllowedTools) > 0 {
		rules, skipped := extend.ClaudeRules(t.AllowedTools)
		if len(skipped) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: allowed-tools %s: harness has no such tool or rule; they ask as usual", t.From, strings.Join(skipped, ", ")))
		}
		if len(rules) > 0 {
			granted, note := s.mayGrant(ctx, t, rules, ap)
			if note != "" {
				c.Notes = append(c.Notes, note)
			}
			if granted {
				restore, err := s.Gate.AllowFor("allowed-tools of "+t.From, rules, t.Project)
				if err != nil {
					c.Notes = append(c.Notes, fmt.Sprintf("%s: allowed-tools not applied: %v", t.From, err))
				} else {
					undo = append(undo, restore)
				}
			}
		}
	}
	return c, true, nil
}

// mayGrant decides whether a command's allowed-tools apply.
func (s *Session) mayGrant(ctx context.Context, t extend.Turn, rules []string, ap GrantApprover) (bool, string) {
	if t.Trusted {
		return true, ""
	}
	key := t.From + "\x00" + strings.Join(rules, "\x00")
	s.mu.Lock()
	ok := s.grants[key]
	s.mu.Unlock()
	if ok {
		return true, ""
	}
	if ap == nil {
		return false, fmt.Sprintf("%s: its allowed-tools (%s) are not applied: the file is in the project, where the agent could have written it; they apply once approved in an interactive session, or from a copy in .agents/commands (read-only to the agent)", t.From, strings.Join(rules, ", "))
	}
	yes, err := ap.ApproveGrant(ctx, t.From, rules)
	if err != nil || !yes {
		return false, t.From + ": its allowed-tools are not applied; the calls ask as usual"
	}
	s.mu.Lock()
	if s.grants == nil {
		s.grants = map[string]bool{}
	}
	s.grants[key] = true
	s.mu.Unlock()
	return true, ""
}

// turnModel switches the session to model for one turn when the
// catalogue knows it as a model of the session's provider; restore is nil
// when it does not, and note says which model the turn uses.
func (s *Session) turnModel(model, from string) (note string, restore func()) {
	m, known := llm.LookupModel(model)
	if !known && s.Config.Provider == "anthropic" {
		// Claude Code's aliases: the newest model of the family.
		for _, c := range llm.DefaultCatalogue().Models {
			if (model == "haiku" || model == "sonnet" || model == "opus") && strings.HasPrefix(c.Name, "claude-"+model+"-") {
				m, known, model = c, true, c.Name
				break
			}
		}
	}
	cur := s.Config.Model
	switch {
	case !known:
		return fmt.Sprintf("%s asks for the model %s, which the catalogue does not know (harness models): the turn uses %s", from, model, cur), nil
	case m.Provider != "" && m.Provider != s.Config.Provider && (m.Provider == "anthropic" || s.Config.Provider == "anthropic"):
		return fmt.Sprintf("%s asks for the model %s, a model of %s, not of this session's provider (%s): the turn uses %s", from, model, m.Provider, s.Config.Provider, cur), nil
	case llm.Normalize(m.Name) == llm.Normalize(cur):
		return "", nil
	}
	a := s.Agent
	a.SetModel(model)
	return fmt.Sprintf("%s: this turn uses the model %s", from, model), func() { a.SetModel(cur) }
}
