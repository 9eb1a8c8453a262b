package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/checkpoint"
)

// builtins are harness's own slash commands that make sense in an editor,
// as the chat has them; their output is the turn's agent text.
var builtins = []availableCommand{
	{Name: "compact", Description: "summarise the conversation now, keeping what matters for focus", Input: &commandInput{Hint: "[focus]"}},
	{Name: "undo", Description: "set back the files the last turn (or its last call) changed", Input: &commandInput{Hint: "[call|--force]"}},
}

// compactMin is the conversation size (estimated tokens) below which
// /compact declines: its summary would take about as much (the chat's
// rule).
const compactMin = 256

// builtin parses "/name args" naming a built-in command.
func builtin(text string) (name, arg string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), "/")
	if !ok {
		return "", "", false
	}
	name, arg, _ = strings.Cut(rest, " ")
	for _, b := range builtins {
		if b.Name == name {
			return name, strings.TrimSpace(arg), true
		}
	}
	return "", "", false
}

// runBuiltin runs a built-in command and says what it did; an error is a
// refusal to say to the user, not a failed turn.
func (ss *session) runBuiltin(ctx context.Context, t *turn, name, arg string) (string, error) {
	s := ss.s
	switch name {
	case "compact":
		if s.History.Len() == 0 {
			return "nothing to compact yet: the session has no messages", nil
		}
		before := s.History.MessageTokens()
		if before < compactMin {
			return fmt.Sprintf("nothing to compact: the conversation is about %d tokens, less than its summary would take", before), nil
		}
		if err := s.Agent.Compact(ctx, arg, t); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("compaction failed: %w", err)
		}
		return fmt.Sprintf("compacted: the conversation went from about %d to %d tokens", before, s.History.MessageTokens()), nil
	case "undo":
		sel, o, err := checkpoint.ParseUndoWords(arg)
		if err != nil {
			return "", err
		}
		res, err := s.Checkpoints.Undo(sel, o)
		if err != nil {
			return "", fmt.Errorf("/undo: %w", err)
		}
		return res.Describe(s.Sandbox.Policy().Writable()), nil
	}
	return "", errors.New("no such command: /" + name)
}
