package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// @path attaches a project file to the prompt; nothing outside the
// project or hidden by the sandbox is read.
func TestExpandMentions(t *testing.T) {
	proj := t.TempDir()
	out := t.TempDir()
	os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "secret.env"), []byte("KEY=1\n"), 0o644)
	os.WriteFile(filepath.Join(out, "x.txt"), []byte("outside\n"), 0o644)
	os.Symlink(filepath.Join(out, "x.txt"), filepath.Join(proj, "link.txt"))
	got, notes := expandMentions("look at @main.go, and @link.txt and @secret.env and @mian.go; mail me@example.com", proj, []string{filepath.Join(proj, "secret.env")})
	if !strings.Contains(got, "<file path=\"main.go\">\npackage main\n</file>") {
		t.Errorf("main.go not attached:\n%s", got)
	}
	for _, gone := range []string{"outside", "KEY=1"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q attached:\n%s", gone, got)
		}
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"attached main.go (1 lines)", "@link.txt is outside the project", "@secret.env is hidden by the sandbox", "@mian.go: no such file in the project: not attached"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q: %v", want, notes)
		}
	}
	if p, n := expandMentions("no mentions here", proj, nil); p != "no mentions here" || len(n) != 0 {
		t.Errorf("changed a prompt without mentions: %q %v", p, n)
	}
}

// TestIsPathPrompt: a prompt that starts with a path (an image dragged
// into the terminal, a file named first) is a prompt, not a slash command.
func TestIsPathPrompt(t *testing.T) {
	dir := t.TempDir()
	for line, want := range map[string]bool{
		"/home/u/shot.png what is this?": true,
		dir + " what is in here":         true,
		"/help":                          false,
		"/compact keep the plan":         false,
		"/git:fix 12":                    false,
		"/undo call":                     false,
	} {
		if got := isPathPrompt(line); got != want {
			t.Errorf("isPathPrompt(%q) = %v, want %v", line, got, want)
		}
	}
}
