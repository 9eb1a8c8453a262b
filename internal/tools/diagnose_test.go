package tools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditsAskForDiagnostics: write_file and edit_file hand the real path
// and the new text to Env.Diagnose and append what it says; a refused
// edit asks nothing.
func TestEditsAskForDiagnostics(t *testing.T) {
	env, proj := newEnv(t)
	var asked []string
	env.Diagnose = func(_ context.Context, path string, text []byte) string {
		asked = append(asked, path+"="+string(text))
		if strings.Contains(string(text), "bad") {
			return "a.go:1:1: error: bad"
		}
		return ""
	}
	want := filepath.Join(proj, "a.go")
	res := run(t, env, "write_file", `{"path":"a.go","content":"bad"}`)
	if res.IsError || res.Content != "created a.go (3 bytes, 1 lines)\n\na.go:1:1: error: bad" {
		t.Fatalf("write: %+v", res)
	}
	res = run(t, env, "edit_file", `{"path":"a.go","old_string":"bad","new_string":"good"}`)
	if res.IsError || res.Content != "edited a.go: 1 replacement(s)" {
		t.Fatalf("edit: %+v", res)
	}
	run(t, env, "edit_file", `{"path":"a.go","old_string":"missing","new_string":"x"}`)
	if len(asked) != 2 || asked[0] != want+"=bad" || asked[1] != want+"=good" {
		t.Fatalf("asked %q", asked)
	}
}
