package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
)

// TestCompletePrompt: completion/complete for a prompt's arguments, as Tab
// asks it after /mcp__SERVER__PROMPT: the next positional argument, one
// by NAME=, the arguments typed already sent as context (greet's names
// depend on its lang), values with blanks quoted, and nothing once every
// argument is filled.
func TestCompletePrompt(t *testing.T) {
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	m := start(t, sb, Options{}, f.goServer("go", "full"))
	review, ok := m.PromptByCommand("mcp__go__review")
	greet, ok2 := m.PromptByCommand("mcp__go__greet")
	if !ok || !ok2 {
		t.Fatalf("prompts: %+v", m.Prompts())
	}
	for _, tc := range []struct {
		p     Prompt
		typed string
		want  string
	}{
		{review, "", `main.go main_test.go "my notes.txt"`},
		{review, "main_", "main_test.go"},
		{review, "m", `main.go main_test.go "my notes.txt"`},
		{review, "file=my", `file="my notes.txt"`},
		{review, "main.go ", ""}, // every argument filled
		{greet, "f", "fr"},
		{greet, "en A", "Alice Albert"},
		{greet, "fr A", "Amélie Anaïs"},
		{greet, "lang=fr name=A", "name=Amélie name=Anaïs"},
		{greet, "name=A lang=f", "lang=fr"},
	} {
		got, err := m.CompletePrompt(context.Background(), tc.p, tc.typed)
		if err != nil {
			t.Errorf("%s %q: %v", tc.p.Name, tc.typed, err)
			continue
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s %q: %q, want %q", tc.p.Name, tc.typed, strings.Join(got, " "), tc.want)
		}
	}
}
