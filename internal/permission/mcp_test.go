package permission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPRules: MCP tools are named mcp__SERVER__TOOL in rules as in
// Claude Code; nothing matched asks; a server's name alone covers its
// tools; a project rule cannot loosen a user's deny; --allow takes the
// name; a headless refusal says which --allow would do.
func TestMCPRules(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.rules")
	proj := filepath.Join(dir, "project.rules")
	os.WriteFile(user, []byte("allow mcp__fs__read_text_file\ndeny mcp__github\nallow mcp__memory__*\nask mcp__memory__delete_*\n"), 0o644)
	os.WriteFile(proj, []byte("allow mcp__github__get_issue\nallow mcp__fs__write_file\n"), 0o644)
	g := testGate(t, func(o *Options) {
		o.UserFile, o.ProjectFile = user, proj
		o.Allow = []string{"mcp__go__echo"}
	})
	tests := []struct {
		tool string
		want Verdict
		rule string
	}{
		{"mcp__fs__read_text_file", Allow, "allow mcp__fs__read_text_file"},
		{"mcp__fs__list_directory", Ask, "default: ask (MCP tools ask until a rule allows them)"},
		{"mcp__fs__write_file", Allow, "allow mcp__fs__write_file"},
		{"mcp__github__create_issue", Deny, "deny mcp__github"},
		// The project's allow does not loosen the user's deny of the server.
		{"mcp__github__get_issue", Deny, "deny mcp__github"},
		{"mcp__memory__read_graph", Allow, "allow mcp__memory__*"},
		{"mcp__memory__delete_entities", Ask, "ask mcp__memory__delete_*"},
		{"mcp__go__echo", Allow, "allow mcp__go__echo"},
		// A server named like another's prefix is another server.
		{"mcp__fsx__read_text_file", Ask, "default: ask (MCP tools ask until a rule allows them)"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			d := g.Decide(Request{Tool: tt.tool, Command: `{"path":"x"}  (the server says this tool is read-only)`})
			if d.Verdict != tt.want || d.Rule != tt.rule {
				t.Errorf("Decide(%s) = %s %q, want %s %q", tt.tool, d.Verdict, d.Rule, tt.want, tt.rule)
			}
		})
	}
	ok, msg := g.Check(context.Background(), Request{Tool: "mcp__fs__list_directory"})
	if ok || !strings.Contains(msg, "--allow 'mcp__fs__list_directory'") || !strings.Contains(msg, "MCP tool mcp__fs__list_directory") {
		t.Errorf("headless: ok=%v %q", ok, msg)
	}
	if _, err := New(Options{Policy: testPol, Allow: []string{"mcp__fs__x pattern"}}); err == nil {
		t.Error("an MCP rule with a pattern was accepted")
	}
}

// TestMCPAlways: "always" on an MCP tool saves the tool's name in the
// project file, and covers that tool only.
func TestMCPAlways(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, ".agents", "permissions")
	fp := &fakePrompter{answers: []Answer{{Choice: Always}}}
	g := mustNew(t, Options{Policy: testPolicy(t, dir, home), ProjectFile: pf, Prompter: fp})
	if ok, msg := g.Check(context.Background(), Request{Tool: "mcp__fs__read_text_file"}); !ok {
		t.Fatalf("refused: %s", msg)
	}
	if fp.patterns[0] != "mcp__fs__read_text_file" {
		t.Errorf("pattern offered = %q", fp.patterns[0])
	}
	data, _ := os.ReadFile(pf)
	if !strings.Contains(string(data), "allow mcp__fs__read_text_file\n") {
		t.Errorf("project file:\n%s", data)
	}
	g2 := mustNew(t, Options{Policy: testPolicy(t, dir, home), ProjectFile: pf})
	if d := g2.Decide(Request{Tool: "mcp__fs__read_text_file"}); d.Verdict != Allow {
		t.Errorf("after always, a fresh gate: %s %q", d.Verdict, d.Rule)
	}
	if d := g2.Decide(Request{Tool: "mcp__fs__write_file"}); d.Verdict != Ask {
		t.Errorf("always widened to another tool: %s %q", d.Verdict, d.Rule)
	}
}
