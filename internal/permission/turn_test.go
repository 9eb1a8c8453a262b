package permission

import (
	"path/filepath"
	"testing"
)

// TestAllowFor: a command's allowed-tools allow what they name for the
// turn, each part of a compound command still decided on its own, no deny
// lifted; undo takes them back and leaves a rule granted meanwhile.
func TestAllowFor(t *testing.T) {
	dir := t.TempDir()
	g, err := New(Options{Policy: testPolicy(t, dir, home), Deny: []string{"bash git add secret*"}})
	if err != nil {
		t.Fatal(err)
	}
	add := Request{Tool: "bash", Command: "git add main.go"}
	edit := Request{Tool: "write_file", Path: filepath.Join(dir, "main.go"), Write: true}
	if d := g.Decide(add); d.Verdict != Ask {
		t.Fatalf("before: %v (%s)", d.Verdict, d.Rule)
	}
	undo, err := g.AllowFor("allowed-tools of /commit", []string{"bash git add *", "write **"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		req  Request
		want Verdict
	}{
		{add, Allow},
		{edit, Allow},
		{Request{Tool: "bash", Command: "git add main.go && touch other"}, Ask},
		{Request{Tool: "bash", Command: "git add secret.key"}, Deny},
		{Request{Tool: "bash", Command: "git stash"}, Ask},
	} {
		if d := g.Decide(c.req); d.Verdict != c.want {
			t.Errorf("%+v: %v (%s), want %v", c.req, d.Verdict, d.Rule, c.want)
		}
	}
	if d := g.Decide(add); d.Rule != "allow bash git add *" {
		t.Errorf("rule %q", d.Rule)
	}
	d := g.Decide(Request{Tool: "bash", Command: "touch kept"})
	if err := g.grant(d, false); err != nil {
		t.Fatal(err)
	}
	undo()
	if d := g.Decide(add); d.Verdict != Ask {
		t.Errorf("after undo: %v (%s)", d.Verdict, d.Rule)
	}
	if d := g.Decide(Request{Tool: "bash", Command: "touch kept"}); d.Verdict != Allow {
		t.Errorf("the rule granted during the turn went with the undo: %v (%s)", d.Verdict, d.Rule)
	}
	if _, err := g.AllowFor("x", []string{"bash"}, false); err == nil {
		t.Error("a rule without a pattern was taken")
	}
}
