package ui

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCompleters(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"internal/ui", "internal/cli", ".git"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "internal", "doc.go"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "go.mod"), nil, 0o644)
	c := CommandCompleter([]string{"/compact", "/context", "/cost", "/help"}, PathCompleter(root, root))
	tests := []struct {
		line string
		want []string
	}{
		{"/co", []string{"/compact", "/context", "/cost"}},
		{"/h", []string{"/help"}},
		{"/x", nil},
		{"look at int", []string{"internal/"}},
		{"look at internal/", []string{"internal/cli/", "internal/doc.go", "internal/ui/"}},
		{"look at internal/u", []string{"internal/ui/"}},
		{"g", []string{"go.mod"}},
		{".g", []string{".git/"}},
		{"/compact internal/d", []string{"internal/doc.go"}},
		{"~/go", []string{"~/go.mod"}},
		{"nothing/here/", nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got := c(tt.line, len([]rune(tt.line)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
