package permission

import "testing"

// TestOverride: a hook's allow (or acceptEdits) lets an Ask through but
// never a Deny; a hook's ask turns an Allow into a question.
func TestOverride(t *testing.T) {
	dir := t.TempDir()
	g, err := New(Options{Policy: testPolicy(t, dir, home), Deny: []string{"bash rm *"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  Request
		want Verdict
	}{
		{"ask stays ask", Request{Tool: "bash", Command: "touch x"}, Ask},
		{"allow lifts ask", Request{Tool: "bash", Command: "touch x", Override: Allow, OverrideBy: "hook"}, Allow},
		{"allow never lifts deny", Request{Tool: "bash", Command: "rm x", Override: Allow, OverrideBy: "hook"}, Deny},
		{"ask asks about an allow", Request{Tool: "bash", Command: "ls", Override: Ask, OverrideBy: "hook"}, Ask},
		{"ask leaves deny", Request{Tool: "bash", Command: "rm x", Override: Ask, OverrideBy: "hook"}, Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			if d := g.Decide(c.req); d.Verdict != c.want {
				t.Errorf("verdict %v (%s), want %v", d.Verdict, d.Rule, c.want)
			}
		})
	}
}
