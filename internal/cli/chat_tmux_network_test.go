package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestChatTmuxNetwork: in a real terminal, a command's first connection to
// a host no rule covers asks while the connection waits, showing the host
// and the command; "always" saves the rule and the next connection does
// not ask. localhost is the host, so nothing leaves the machine, and the
// proxy then still refuses it: a saved answer never opens loopback.
func TestChatTmuxNetwork(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed (CI installs it; apt install curl)")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bubblewrap is not installed (CI installs it)")
	}
	for _, size := range firstHourSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) { network(t, bin, size.w, size.h) })
	}
}

func network(t *testing.T, bin string, w, h int) {
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	os.MkdirAll(filepath.Join(home, ".agents"), 0o755)
	os.WriteFile(filepath.Join(home, ".agents", "permissions"), []byte("allow bash curl *\n"), 0o644)
	tm := startTmux(t, w, h, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj, "--sandbox", "bwrap")
	tm.waitFor("banner", "/help for commands")
	tm.waitPrompt()

	enqueue(t, srv, "network.jsonl")
	tm.typeLine("fetch it")
	tm.waitFor("network prompt", "╰ allow?")
	s := tm.screen()
	for _, want := range []string{"connect to the network", "localhost:80", "asked by: curl -sS", "yes, always: localhost"} {
		if !strings.Contains(s, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, s)
		}
	}
	tm.capture(fmt.Sprintf("network-prompt-%d", w))
	tm.answer("a")
	tm.waitFor("final text", "The proxy refused loopback.")
	s = tm.screen()
	if n := strings.Count(s, "╰ allow?"); n != 1 {
		t.Errorf("%d prompts, want 1: the saved rule did not cover the second connection:\n%s", n, s)
	}
	rules, _ := os.ReadFile(filepath.Join(proj, ".agents", "permissions"))
	if !strings.Contains(string(rules), "allow net localhost\n") {
		t.Errorf("the project rules lack the saved host:\n%s", rules)
	}
	tm.typeLine("/network")
	tm.waitFor("/network view", "connections")
	s = tm.screen()
	if !strings.Contains(s, "refused GET localhost:80") || !strings.Contains(s, "loopback") {
		t.Errorf("/network does not show the refused connections:\n%s", s)
	}
	tm.capture(fmt.Sprintf("network-list-%d", w))
	checkFits(t, tm.screen(), w)
}
