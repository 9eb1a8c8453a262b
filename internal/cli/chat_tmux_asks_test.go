package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
)

// TestChatTmuxMCPAsks: an MCP server's question and sampling request in
// a real terminal of 80x24. The question is a form: the box with the
// server's message and fields, fill in, a required field left empty
// asked again, a default kept with Enter, an enum and a boolean picked
// with one key; the server gets what was typed. The sampling request is
// a permission box with its summary; once allowed it goes to the
// session's model and the server gets the reply.
func TestChatTmuxMCPAsks(t *testing.T) {
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary is the server, copied where the walls let it run
	// (the sandbox's /tmp is its own).
	raw, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(proj, "bin", "mcp-test-server")
	os.MkdirAll(filepath.Dir(server), 0o755)
	if err := os.WriteFile(server, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"go": map[string]any{"command": server, "env": map[string]string{mcptest.KindEnv: "full"}}}})
	os.MkdirAll(filepath.Join(home, ".agents"), 0o700)
	os.WriteFile(filepath.Join(home, ".agents", "mcp.json"), cfg, 0o600)

	tm := startTmux(t, 80, 24, proj, append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "MCP_TIMEOUT=60000"), bin,
		"--project", proj, "--allow", "mcp__go__ask", "--allow", "mcp__go__sample")
	tm.waitFor("banner", "/help for commands")
	tm.waitFor("the go server up", "mcp: go ready (")

	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__go__ask","arguments":{"text":"Who are you?"}}`}}},
		llmtest.Reply{Text: "Thanks, Ann."})
	tm.typeLine("ask me")
	tm.waitFor("the form", "MCP server go asks you")
	for _, want := range []string{"│ Who are you?", "• Your name (string, required) as you like to be called", "• age (integer) [30]", "╰ answer?"} {
		if s := tm.screen(); !strings.Contains(s, want) {
			t.Errorf("the form lacks %q:\n%s", want, s)
		}
	}
	tm.capture("mcp-elicit-form")
	tm.answer("y")
	tm.waitFor("the name field", "Your name *: ")
	tm.keys("Enter")
	tm.waitFor("asked again", "this field is required")
	tm.keys("-l", "Ann")
	tm.keys("Enter")
	tm.waitFor("the age field prefilled", "age: 30")
	tm.keys("Enter")
	tm.waitFor("the color list", "Green (g)")
	tm.answer("1")
	tm.waitFor("the subscribe list", "subscribe")
	tm.answer("n")
	tm.waitFor("the reply", "Thanks, Ann.")
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, `action: accept content: {\"age\":30,\"color\":\"r\",\"name\":\"Ann\",\"subscribe\":false}`) {
		t.Errorf("the server did not get the form's answer: %s", body)
	}

	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__go__sample","arguments":{"text":"say hi"}}`}}},
		llmtest.Reply{Text: "sampled hi"}, llmtest.Reply{Text: "The server got it."})
	tm.typeLine("sample")
	tm.waitFor("the sampling box", "let an MCP server use the model (sampling)")
	for _, want := range []string{"mcp__go__@sampling", "up to 50 tokens", "system: Be brief.", "user: say hi"} {
		if s := tm.screen(); !strings.Contains(s, want) {
			t.Errorf("the sampling box lacks %q:\n%s", want, s)
		}
	}
	tm.capture("mcp-sampling-box")
	tm.answer("y")
	tm.waitFor("the turn's end", "The server got it.")
	reqs = srv.Requests()
	if n := len(reqs); n < 3 || !strings.Contains(string(reqs[n-2].Body), "Be brief.") || !strings.Contains(string(reqs[n-1].Body), "text: sampled hi") {
		t.Errorf("the sampling request or its answer: %d requests", n)
	}
}
