package extend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandFrontMatterSanitised: what a command file says about itself
// (description, argument hint, model, allowed tools) reaches menus and
// /help; a file that carries escape sequences there shows them escaped,
// and a file whose name has control characters is skipped with a warning
// that names it escaped.
func TestCommandFrontMatterSanitised(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	dir := filepath.Join(proj, ".claude", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\ndescription: \"Review\\e]52;c;aGk=\\a \\e[2J now\"\nargument-hint: \"[pr]\\e[1A\"\nmodel: \"m\\u202e\"\nallowed-tools: \"Bash(\\e[31mx)\"\n---\nReview it.\n"
	if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad\x1b]0;t\x07.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, warns := DiscoverCommands(proj, home, nil, nil)
	var found bool
	for _, c := range cs.List() {
		if strings.Contains(c.Name, "bad") {
			t.Errorf("a command named %q was loaded", c.Name)
		}
		if c.Name != "review" {
			continue
		}
		found = true
		for what, s := range map[string]string{"description": c.Description, "argument-hint": c.ArgumentHint, "model": c.Model, "allowed-tools": strings.Join(c.AllowedTools, ",")} {
			if strings.ContainsAny(s, "\x1b\x07\u202e") {
				t.Errorf("%s %q holds a control character", what, s)
			}
		}
		if !strings.Contains(c.Description, `Review\e]52;c;aGk=\x07 \e[2J now`) {
			t.Errorf("description %q: the escapes should show", c.Description)
		}
	}
	if !found {
		t.Fatal("the review command was not loaded")
	}
	var warned bool
	for _, w := range warns {
		if strings.ContainsAny(w.Error(), "\x1b\x07") {
			t.Errorf("warning %q holds a control character", w)
		}
		warned = warned || strings.Contains(w.Error(), `bad\e]0;t\x07.md`)
	}
	if !warned {
		t.Errorf("no warning names the skipped file: %v", warns)
	}
}
