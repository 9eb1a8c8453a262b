package ui

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/permission"
)

// TestRenderMCPPermission: an MCP call's prompt says what it is, names the
// tool and shows its arguments and what the server claims of it.
func TestRenderMCPPermission(t *testing.T) {
	got := RenderPermission(Style{}, permission.Request{Tool: "mcp__fs__read_text_file", Command: `{"path":"/etc/hosts"}  (the server says this tool is read-only)`},
		permission.Decision{Rule: "default: ask (MCP tools ask until a rule allows them)"}, "mcp__fs__read_text_file", 100)
	for _, want := range []string{"call an MCP server's tool", "mcp__fs__read_text_file", `{"path":"/etc/hosts"}`, "read-only"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	// "Always" is one of the answers under it, naming the tool's rule.
	opts, _ := permissionOptions(permission.Request{Tool: "mcp__fs__read_text_file"}, "mcp__fs__read_text_file", false)
	always := false
	for _, o := range opts {
		always = always || o.Key == 'a' && strings.Contains(o.Label, "mcp__fs__read_text_file")
	}
	if !always {
		t.Errorf("no 'always' answer naming the tool: %+v", opts)
	}
	srv := RenderPermission(Style{}, permission.Request{Tool: "mcp_server", Command: "fs: npx -y @modelcontextprotocol/server-filesystem / (from .mcp.json)"}, permission.Decision{}, "", 100)
	if !strings.Contains(srv, "start an MCP server this project defines") || !strings.Contains(srv, "server-filesystem") {
		t.Errorf("server approval prompt:\n%s", srv)
	}
}
