package agent

import (
	"strings"
	"testing"
)

// TestSystemPromptMCPInstructions: the MCP servers' instructions have a
// section of their own, before the project's instructions, that says
// who wrote them; without any there is no section; the prompt is the
// same bytes for the same info (the prefix cache).
func TestSystemPromptMCPInstructions(t *testing.T) {
	info := PromptInfo{Project: "/p", Instructions: "Use tabs.", MCPInstructions: "## fs\nPaths are absolute.\n"}
	got := SystemPrompt(info)
	mcp, proj := strings.Index(got, "# MCP server instructions\n"), strings.Index(got, "# Project instructions\n")
	if mcp < 0 || proj < mcp || !strings.Contains(got, "Written by the MCP servers of this session") || !strings.Contains(got, "## fs\nPaths are absolute.\n") {
		t.Errorf("prompt:\n%s", got)
	}
	if SystemPrompt(info) != got {
		t.Error("the same info gave another prompt")
	}
	info.MCPInstructions = ""
	if strings.Contains(SystemPrompt(info), "MCP server instructions") {
		t.Error("a section without instructions")
	}
}
