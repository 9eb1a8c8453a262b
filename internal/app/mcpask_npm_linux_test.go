package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestMCPHeadlessEverything: the reference everything server from npm,
// inside the bwrap walls of a headless session, offers its elicitation
// and sampling tools (harness declares both) and gets the headless
// answers: its question declined at once, its sampling request refused
// for want of a rule.
func TestMCPHeadlessEverything(t *testing.T) {
	testenv.Slow(t)
	dir := os.Getenv("HARNESS_MCP_NPM")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "harness-test", "mcp-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		testenv.Missing(t, testenv.MCPNpm, "the everything server is not installed in "+dir+" (HARNESS_MCP_NPM): .ci/run installs it")
	}
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, testenv.MCPNpm, "node is not installed")
	}
	if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+why)
	}
	o, srv := mcpOptions(t, "full", "lazy")
	o.Backend = sandbox.BackendBwrap
	cfg := filepath.Join(t.TempDir(), "everything.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}}})
	os.WriteFile(cfg, raw, 0o644)
	o.MCPConfigs = []string{cfg}
	o.Allow = []string{"mcp__everything__trigger-elicitation-request", "mcp__everything__trigger-sampling-request"}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, w := range s.Warnings {
		t.Logf("warning: %s", w.Text)
	}
	var told notices
	s.SetNotify(told.add)
	if got := callResult(t, s, srv, "mcp__everything__trigger-elicitation-request", `{}`); !strings.Contains(got, "User declined to provide the requested information") {
		t.Errorf("the server's question: %s", got)
	}
	if got := callResult(t, s, srv, "mcp__everything__trigger-sampling-request", `{"prompt":"hi"}`); !strings.Contains(got, "user rejected sampling request") {
		t.Errorf("the sampling request: %s", got)
	}
	for _, want := range []string{"MCP server everything asked for your input", "allow it with --allow mcp__everything__@sampling"} {
		if !strings.Contains(told.all(), want) {
			t.Errorf("notices lack %q: %s", want, told.all())
		}
	}
}
