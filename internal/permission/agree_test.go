package permission

import (
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/shellquote"
)

// The gate's walls are the policy's: every carve-out and secret the
// policy holds (whether it exists or not) is refused to shell commands
// and file tools alike, and what the policy allows to be written in the
// project is not refused.
func TestWallsAgreeWithPolicy(t *testing.T) {
	g := testGate(t, nil)
	paths := append(testPol.ReadOnly(), filepath.Join(proj, ".git", "hooks", "not-yet"), filepath.Join(proj, ".agents", "not-yet"))
	for _, p := range paths {
		target := filepath.Join(p, "x")
		if err := testPol.CheckWrite(target); err == nil {
			t.Fatalf("policy allows a write to %s", target)
		}
		for _, req := range []Request{
			{Tool: "bash", Command: "echo x > " + shellquote.Quote(target)},
			{Tool: "bash", Command: "sort -o " + shellquote.Quote(target) + " in"},
			{Tool: "bash", Command: "touch " + shellquote.Quote(target)},
			{Tool: "write_file", Path: target, Write: true},
		} {
			if d := g.Decide(req); d.Verdict != Deny {
				t.Errorf("%+v = %s %q, want deny (policy: read-only)", req, d.Verdict, d.Rule)
			}
		}
	}
	for _, p := range testPol.DenyRead() {
		target := filepath.Join(p, "x")
		if err := testPol.CheckRead(target); err == nil {
			t.Fatalf("policy allows a read of %s", target)
		}
		for _, req := range []Request{
			{Tool: "bash", Command: "cat " + shellquote.Quote(target)},
			{Tool: "bash", Command: "wc -l < " + shellquote.Quote(target)},
			{Tool: "read_file", Path: target},
		} {
			if d := g.Decide(req); d.Verdict != Deny {
				t.Errorf("%+v = %s %q, want deny (policy: secret)", req, d.Verdict, d.Rule)
			}
		}
	}
	for _, rel := range []string{"main.go", "sub/new.txt", "a/b/c"} {
		target := filepath.Join(proj, rel)
		if err := testPol.CheckWrite(target); err != nil {
			t.Fatalf("policy refuses %s: %v", target, err)
		}
		if d := g.Decide(Request{Tool: "bash", Command: "echo x > " + shellquote.Quote(target)}); d.Verdict == Deny {
			t.Errorf("echo x > %s = deny %q, but the policy allows the write", target, d.Rule)
		}
	}
}
