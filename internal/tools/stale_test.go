package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaleWrites: a file the user changed after the agent read it is not
// overwritten from the agent's stale copy, by write_file or edit_file;
// the model is told to read it again, and after it does, both work. The
// agent's own writes and commands never make its copy stale, and a file
// it never read is not judged.
func TestStaleWrites(t *testing.T) {
	env, proj := newEnv(t)
	f := filepath.Join(proj, "a.go")
	os.WriteFile(f, []byte("one\ntwo\n"), 0o644)
	if res := run(t, env, "read_file", `{"path":"a.go"}`); res.IsError {
		t.Fatal(res.Content)
	}
	// The user adds a line in their editor.
	os.WriteFile(f, []byte("one\ntwo\nusers line\n"), 0o644)
	for _, c := range []struct{ tool, input string }{
		{"write_file", `{"path":"a.go","content":"one\nTWO\n"}`},
		{"edit_file", `{"path":"a.go","old_string":"two","new_string":"TWO"}`},
	} {
		res := run(t, env, c.tool, c.input)
		if !res.IsError || !strings.Contains(res.Content, "changed since you last read it") {
			t.Errorf("%s from a stale read: %q, want a refusal saying to read again", c.tool, res.Content)
		}
		if b, _ := os.ReadFile(f); string(b) != "one\ntwo\nusers line\n" {
			t.Fatalf("%s overwrote the user's line: %q", c.tool, b)
		}
	}
	run(t, env, "read_file", `{"path":"a.go"}`)
	if res := run(t, env, "edit_file", `{"path":"a.go","old_string":"two","new_string":"TWO"}`); res.IsError {
		t.Fatalf("after reading again: %s", res.Content)
	}
	// Its own edits, writes and commands keep its copy current.
	if res := run(t, env, "edit_file", `{"path":"a.go","old_string":"one","new_string":"ONE"}`); res.IsError {
		t.Fatalf("a second edit of its own: %s", res.Content)
	}
	if res := run(t, env, "bash", `{"command":"echo more >> a.go"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if res := run(t, env, "write_file", `{"path":"a.go","content":"new\n"}`); res.IsError {
		t.Fatalf("a write after its own command: %s", res.Content)
	}
	// A file never read is written as before.
	os.WriteFile(filepath.Join(proj, "b.go"), []byte("b\n"), 0o644)
	if res := run(t, env, "write_file", `{"path":"b.go","content":"B\n"}`); res.IsError {
		t.Fatalf("a file never read: %s", res.Content)
	}
}
