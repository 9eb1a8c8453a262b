package ui

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
)

func TestFuzzyScore(t *testing.T) {
	tests := []struct {
		q, s string
		ok   bool
	}{
		{"co", "compact", true}, {"cst", "cost", true}, {"ed", "internal/ui/editor.go", true},
		{"uied", "internal/ui/editor.go", true}, {"zz", "compact", false}, {"", "any", true},
	}
	for _, tt := range tests {
		if _, ok := FuzzyScore(tt.q, tt.s); ok != tt.ok {
			t.Errorf("FuzzyScore(%q, %q) ok = %v", tt.q, tt.s, ok)
		}
	}
	// A prefix beats a match in the base name, which beats one in a
	// directory, which beats a scattered one.
	a, _ := FuzzyScore("edit", "editor.go")
	b, _ := FuzzyScore("edit", "internal/ui/editor.go")
	c, _ := FuzzyScore("edit", "docs/editing/x.md")
	d, _ := FuzzyScore("edit", "e_d_i_t.go")
	if !(a < b && b < c && c < d) {
		t.Errorf("scores not in order: prefix %d, base name %d, directory %d, scattered %d", a, b, c, d)
	}
}

// The / menu opens as the command is typed, narrows, moves with the
// arrows and sends the highlighted command with Enter; the @ menu lists
// project files and Tab takes one.
func TestEditorPopup(t *testing.T) {
	testenv.Slow(t)
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, "internal", "ui"), 0o755)
	os.WriteFile(filepath.Join(proj, "internal", "ui", "editor.go"), nil, 0o644)
	os.WriteFile(filepath.Join(proj, "main.go"), nil, 0o644)
	builtins := func() []MenuItem {
		return []MenuItem{{Name: "/compact", Args: "[focus]", Detail: "summarise"}, {Name: "/context", Detail: "what fills it"},
			{Name: "/cost", Detail: "dollars"}, {Name: "/resume", Args: "ID", Detail: "switch"}}
	}
	skills := func() []MenuItem { return []MenuItem{{Name: "/release", Detail: "cut a release", Source: "skill"}} }
	pop := NewPopup([]CommandSource{builtins, skills}, ProjectFiles(proj, 100))
	tests := []struct{ name, keys, want, shown string }{
		{"arrows and enter send", "/co" + settled + "\x1b[B\r", "/context", "❯ /compact"},
		{"narrowed", "/cst" + settled + "\r", "/cost", "❯ /cost"},
		{"a skill", "/rel" + settled + "\r", "/release", "cut a release (skill)"},
		{"an argument is typed", "/res\r12ab\r", "/resume 12ab", "/resume"},
		{"esc closes it", "/co" + settled + "\x1b" + settled + "\r", "/co", "/compact"},
		{"a file", "look at @uied" + settled + "\t and more\r", "look at @internal/ui/editor.go  and more", "@internal/ui/editor.go"},
		{"a directory", "@intern" + settled + "\r", "@internal/", "❯ @internal/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			tm := &Term{Out: &out, TTY: true, Size: func() (int, int) { return 80, 24 }}
			ed := NewEditor(NewInput(&pausedReader{parts: strings.Split(tt.keys, settled)}), tm, EditorOptions{ForceRaw: true, NoHistory: true, Popup: pop})
			got, err := ed.ReadLine(context.Background(), "› ")
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("line %q, want %q", got, tt.want)
			}
			if !strings.Contains(StripANSI(out.String()), tt.shown) {
				t.Errorf("the menu never showed %q:\n%q", tt.shown, StripANSI(out.String()))
			}
		})
	}
}
