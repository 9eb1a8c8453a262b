package autorun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWatchFindsEachKind: every kind of file that runs later, planted
// after the session opened, is reported with what runs it; ordinary files
// are not.
func TestWatchFindsEachKind(t *testing.T) {
	root := t.TempDir()
	write(t, root, "README.md", "hi")
	write(t, root, ".husky/_/h", "stub")
	write(t, root, ".venv/pyvenv.cfg", "home = /usr/bin")
	os.MkdirAll(filepath.Join(root, ".venv/lib/python3.11/site-packages"), 0o755)
	w := New(root)
	cases := []struct{ rel, runBy string }{
		{".husky/pre-commit", "husky"},
		{".pre-commit-config.yaml", "pre-commit"},
		{"lefthook.yml", "lefthook"},
		{".envrc", "direnv"},
		{"packages/api/.envrc", "direnv"},
		{".vscode/tasks.json", "folderOpen"},
		{".devcontainer/devcontainer.json", "postCreateCommand"},
		{".venv/lib/python3.11/site-packages/evil.pth", "python"},
		{".venv/lib/python3.11/site-packages/sitecustomize.py", "python"},
		{"AGENTS.md", "next session"},
		{".claude/settings.json", "hooks"},
		{".mcp.json", "MCP"},
		{"harness.Dockerfile", "container session"},
		{".yarnrc.yml", "yarnPath"},
	}
	for _, c := range cases {
		write(t, root, c.rel, "planted")
	}
	write(t, root, "src/main.go", "package main")
	write(t, root, "node_modules/x/.envrc", "ignored: tools' trees")
	got := map[string]File{}
	for _, f := range w.Changes() {
		got[Rel(root, f.Path)] = f
	}
	for _, c := range cases {
		f, ok := got[c.rel]
		if !ok {
			t.Errorf("%s was not reported", c.rel)
			continue
		}
		if f.Change != "created" || !strings.Contains(strings.ToLower(f.RunBy), strings.ToLower(c.runBy)) {
			t.Errorf("%s: %+v, want created, run by %s", c.rel, f, c.runBy)
		}
	}
	for _, rel := range []string{"src/main.go", "README.md", "node_modules/x/.envrc"} {
		if _, ok := got[rel]; ok {
			t.Errorf("%s was reported", rel)
		}
	}
	if len(w.Changes()) != 0 {
		t.Errorf("reported twice")
	}
	// A rewrite that keeps the size and the time is seen.
	p := filepath.Join(root, ".envrc")
	st, _ := os.Stat(p)
	os.WriteFile(p, []byte("PLANTED"), 0o644)
	os.Chtimes(p, st.ModTime(), st.ModTime())
	if ch := w.Changes(); len(ch) != 1 || ch[0].Change != "changed" {
		t.Errorf("same-size rewrite: %+v", ch)
	}
	os.Remove(filepath.Join(root, ".mcp.json"))
	if ch := w.Changes(); len(ch) != 1 || ch[0].Change != "removed" {
		t.Errorf("removal: %+v", ch)
	}
	// All is against the start.
	if n := len(w.All()); n != len(cases)-1 {
		t.Errorf("All lists %d, want %d", n, len(cases)-1)
	}
}
