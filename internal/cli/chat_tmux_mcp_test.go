package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/testenv"
)

// everythingBin is the reference everything server installed by .ci/run
// (HARNESS_MCP_NPM), or "" after saying why it is missing.
func everythingBin(t *testing.T) string {
	dir := os.Getenv("HARNESS_MCP_NPM")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "harness-test", "mcp-npm")
	}
	p := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	_, err := os.Stat(p)
	if _, nerr := exec.LookPath("node"); err != nil || nerr != nil {
		if testenv.Required(testenv.MCPNpm) {
			t.Fatalf("the everything server is not installed in %s (HARNESS_MCP_NPM): .ci/run installs it", dir)
		}
		t.Logf("the everything server is not installed in %s: its part is skipped", dir)
		return ""
	}
	return p
}

// TestChatTmuxMCP: MCP in a real terminal. /mcp lists the servers with
// their counts; /help lists a server's prompt as a command; the @ menu
// offers its resources; Tab completes a prompt's arguments from the
// server; /mcp__go__review runs the server's prompt and
// @go:test://readme attaches the resource; a hanging MCP call is
// interrupted with Esc and the server is told (it records the
// cancellation in the project); the everything server's progress shows
// while its long call runs.
func TestChatTmuxMCP(t *testing.T) {
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(proj, "bin", "mcp-test-server")
	os.MkdirAll(filepath.Dir(server), 0o755)
	if err := os.WriteFile(server, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{"go": map[string]any{"command": server, "env": map[string]string{mcptest.KindEnv: "full"}}}
	everything := everythingBin(t)
	if everything != "" {
		servers["everything"] = map[string]any{"command": everything, "args": []string{"stdio"}}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.MkdirAll(filepath.Join(home, ".agents"), 0o700)
	os.WriteFile(filepath.Join(home, ".agents", "mcp.json"), cfg, 0o600)

	tm := startTmux(t, 140, 45, proj, append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "MCP_TIMEOUT=60000"), bin,
		"--project", proj, "--allow", "mcp__go", "--allow", "mcp__everything")
	tm.waitFor("banner", "/help for commands")
	// The servers start beside the prompt; each says when it is up.
	tm.waitFor("the go server up", "mcp: go ready (")
	if everything != "" {
		tm.waitFor("the everything server up", "mcp: everything ready (")
	}

	tm.typeLine("/mcp")
	tm.waitFor("/mcp", "MCP servers (")
	tm.waitFor("/mcp counts", "2 prompts · 1 resources")
	if s := tm.screen(); !strings.Contains(s, "go  connected · stdio") {
		t.Errorf("/mcp lacks the go server's state:\n%s", s)
	}
	tm.typeLine("/help")
	tm.waitFor("/help lists the prompt", "/mcp__go__review <file>")

	// Tab completes a prompt's arguments from its server
	// (completion/complete), the arguments typed already as context.
	tm.waitPrompt()
	tm.keys("-l", "/mcp__go__review main_")
	tm.keys("Tab")
	tm.waitFor("one value completed", "/mcp__go__review main_test.go ")
	tm.keys("C-u")
	tm.keys("-l", "/mcp__go__greet fr A")
	tm.keys("Tab")
	tm.waitFor("the values by the lang given", "Anaïs")
	if s := tm.screen(); !strings.Contains(s, "Amélie") || strings.Contains(s, "Albert") {
		t.Errorf("greet's names for fr:\n%s", s)
	}
	tm.keys("C-u")

	// The @ menu offers the resource.
	tm.waitPrompt()
	tm.keys("-l", "look at @go:test")
	tm.waitFor("@ menu", "@go:test://readme")
	tm.keys("C-u")

	// The prompt as a command; the resource as a mention.
	srv.Enqueue(llmtest.Reply{Text: "Reviewed it."})
	tm.typeLine("/mcp__go__review main.go")
	tm.waitFor("the prompt's turn", "Reviewed it.")
	srv.Enqueue(llmtest.Reply{Text: "Summarised it."})
	// Enter takes the @ menu's item (the whole mention), a second sends.
	tm.waitPrompt()
	tm.keys("-l", "summarise @go:test://rea")
	tm.waitFor("@ menu for the mention", "@go:test://readme")
	tm.keys("Enter")
	tm.waitFor("the mention completed", "summarise @go:test://readme ")
	tm.keys("Enter")
	tm.waitFor("the resource's turn", "Summarised it.")
	tm.waitFor("the attachment note", "attached test://readme from MCP server go")
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	p1, _ := json.Marshal(reqs[len(reqs)-2].Messages)
	p2, _ := json.Marshal(reqs[len(reqs)-1].Messages)
	if !bytes.Contains(p1, []byte("Review main.go carefully.")) {
		t.Errorf("the prompt's text did not reach the model: %s", p1)
	}
	if !bytes.Contains(p2, []byte(`uri=\"test://readme\"`)) || !bytes.Contains(p2, []byte("the readme")) {
		t.Errorf("the resource did not reach the model: %s", p2)
	}

	// Esc stops a hanging MCP call; the server is told, the model goes on.
	srv.Enqueue(llmtest.Reply{Text: "Calling.", ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__go__hang"}`}}},
		llmtest.Reply{Text: "Left it."})
	tm.typeLine("hang")
	tm.waitFor("the call runs", "mcp_call")
	time.Sleep(500 * time.Millisecond) // the request reaches the server
	tm.keys("Escape")
	tm.waitFor("the model goes on", "Left it.")
	deadline := time.Now().Add(tmuxDeadline)
	for {
		if _, err := os.Stat(filepath.Join(proj, "cancelled.txt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not told of the cancellation:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}

	if everything != "" {
		// Progress of a long call shows while it runs.
		srv.Enqueue(llmtest.Reply{Text: "Running.", ToolCalls: []llmtest.ToolCall{{Name: "mcp_call",
			Input: `{"name":"mcp__everything__trigger-long-running-operation","arguments":{"duration":6,"steps":3}}`}}})
		srv.Enqueue(llmtest.Reply{Text: "The long one is done."})
		tm.typeLine("run the long one")
		tm.waitFor("progress", "progress 1/3 (33%)")
		tm.capture("mcp-progress")
		tm.waitFor("the long call's end", "The long one is done.")
	}
	tm.keys("C-d")
	tm.waitExit()
}
