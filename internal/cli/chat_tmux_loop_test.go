package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/testenv"
)

// backWithin is the longest a key that stops work may take to bring the
// prompt back (issue #43: within a second, always).
const backWithin = time.Second

// promptBack presses key and returns how long the empty prompt took to
// come back (the last row of the screen is "›" again); it fails the test
// after tmuxDeadline.
func (tm *tmuxSession) promptBack(key string) time.Duration {
	tm.t.Helper()
	start := time.Now()
	tm.keys(key)
	deadline := start.Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		lines := strings.Split(strings.TrimRight(tm.screen(), "\n "), "\n")
		if strings.TrimSpace(lines[len(lines)-1]) == "›" {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.t.Fatalf("the prompt never came back after %s:\n%s", key, tm.screen())
	return 0
}

// slowMCPProject writes a project with two MCP servers of the user's: slow
// (the test binary's MCP server behind a script that sleeps first) and
// broken (exits at once with a word on stderr). It returns the project.
func slowMCPProject(t *testing.T, home, proj string, sleep time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(proj, "bin")
	os.MkdirAll(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "mcp-test-server"), raw, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nsleep %d\nexec %q\n", int(sleep.Seconds()), filepath.Join(bin, "mcp-test-server"))
	if err := os.WriteFile(filepath.Join(bin, "slow-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	servers := map[string]any{
		"slow":   map[string]any{"command": filepath.Join(bin, "slow-server"), "env": map[string]string{mcptest.KindEnv: "full"}},
		"broken": map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo broken-on-purpose >&2; exit 3"}},
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.MkdirAll(filepath.Join(home, ".agents"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".agents", "mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestChatTmuxNeverStuck, at 80×24: nothing holds up the prompt or the
// keys that stop work (issue #43).
//   - An MCP server that takes seconds to start and one that fails do not
//     delay the prompt: it is usable at once, "mcp: starting …" says what
//     goes on, and each start's end shows as a line of its own while the
//     user types (what was typed stays on the prompt).
//   - Esc during a provider's retry wait (a 529 with retry-after 20 s)
//     brings the prompt back within a second, and so does Ctrl-C; so does
//     Esc during a call of an MCP tool that never answers.
//   - So does Esc during a compaction waiting to retry, and during a
//     PreToolUse hook that sleeps.
//   - Resizing during a permission prompt and back duplicates no line.
func TestChatTmuxNeverStuck(t *testing.T) {
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	slowMCPProject(t, home, proj, 6*time.Second)
	// A hook of the user's that takes its time before a write_file call.
	os.WriteFile(filepath.Join(home, ".agents", "settings.json"), []byte(`{"hooks": {
		"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "sleep 30"}]}]}}`), 0o644)
	tm := startTmux(t, 80, 24, proj, append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "MCP_TIMEOUT=60000"), bin,
		"--project", proj, "--allow", "mcp__slow")

	// The prompt comes while the slow server still starts.
	tm.waitPrompt()
	if s := words(tm.screen()); !strings.Contains(s, "mcp: starting broken, slow…") {
		t.Errorf("no line says the servers are starting:\n%s", tm.screen())
	}
	if s := tm.screen(); strings.Contains(s, "mcp: slow ready") {
		t.Fatalf("the prompt came only once the slow server was up:\n%s", s)
	}
	tm.waitForWords("the broken server's failure", "mcp: broken failed:")
	tm.waitForWords("where to look", "see /mcp")
	tm.keys("-l", "typed while it starts")
	tm.waitFor("the slow server up", "mcp: slow ready (")
	waitRows(t, tm, func(rows []string) bool {
		return strings.TrimSpace(rows[len(rows)-1]) == "› typed while it starts"
	})
	tm.keys("C-u")
	tm.typeLine("/mcp")
	tm.waitFor("/mcp", "MCP servers (2)")
	if s := tm.screen(); !strings.Contains(s, "broken-on-purpose") {
		t.Errorf("/mcp does not say why the broken server failed:\n%s", s)
	}

	// Esc, then Ctrl-C, during a retry wait (the prompts are long enough
	// for /compact below to have something to do).
	for _, key := range []string{"Escape", "C-c"} {
		srv.Enqueue(llmtest.Reply{Status: 529, RetryAfter: "20"})
		// Counted before the prompt goes: the notice may come before
		// typeLine returns.
		notices := strings.Count(tm.screen(), "retrying in")
		tm.typeLine("retry please " + key + strings.Repeat(" and say it all again", 40))
		tm.waitForCount("the retry notice", "retrying in", notices+1)
		if took := tm.promptBack(key); took > backWithin {
			t.Errorf("%s during a retry wait: the prompt came back after %s, want within %s", key, took, backWithin)
		} else {
			t.Logf("%s during a retry wait: prompt back in %s", key, took.Round(time.Millisecond))
		}
	}

	// Esc during an MCP call that never answers stops that call alone: the
	// model is told and goes on (its next reply comes within a second).
	srv.Enqueue(llmtest.Reply{Text: "Calling.", ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__slow__hang"}`}}},
		llmtest.Reply{Text: "Going on without it."})
	tm.typeLine("hang")
	tm.waitFor("the call runs", "mcp_call")
	time.Sleep(300 * time.Millisecond)
	sent := len(srv.Requests())
	start := time.Now()
	tm.keys("Escape")
	tm.waitForWords("the step-stop notice", "stopped the running call (Esc)")
	tm.waitFor("the model's next reply", "Going on without it.")
	if took := time.Since(start); took > backWithin {
		t.Errorf("Esc during a hanging MCP call: the model's next reply came after %s, want within %s", took, backWithin)
	} else {
		t.Logf("Esc during a hanging MCP call: the turn went on in %s", took.Round(time.Millisecond))
	}
	tm.waitPrompt()
	if reqs := srv.Requests(); len(reqs) != sent+1 {
		t.Errorf("%d requests after Esc on the call, want %d", len(reqs), sent+1)
	} else if m := reqs[len(reqs)-1].Messages; !strings.Contains(m[len(m)-1].PlainText()+fmt.Sprint(m[len(m)-1].Blocks), "the user stopped this call (Esc)") {
		t.Errorf("the model was not told the user stopped the call: %+v", m[len(m)-1])
	}

	// Ctrl-C during the same call stops the whole turn: no request follows.
	srv.Enqueue(llmtest.Reply{Text: "Calling.", ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__slow__hang"}`}}})
	calls := strings.Count(tm.screen(), "mcp_call")
	tm.typeLine("hang again")
	tm.waitForCount("the call runs again", "mcp_call", calls+1)
	time.Sleep(300 * time.Millisecond)
	sent = len(srv.Requests())
	if took := tm.promptBack("C-c"); took > backWithin {
		t.Errorf("Ctrl-C during a hanging MCP call: the prompt came back after %s, want within %s", took, backWithin)
	} else {
		t.Logf("Ctrl-C during a hanging MCP call: prompt back in %s", took.Round(time.Millisecond))
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("Ctrl-C during a call: %d requests followed, want none (the turn stops)", n-sent)
	}

	// Esc during a compaction whose request waits to be retried.
	srv.Enqueue(llmtest.Reply{Status: 529, RetryAfter: "20"})
	sent = len(srv.Requests())
	tm.typeLine("/compact")
	for deadline := time.Now().Add(tmuxDeadline); len(srv.Requests()) == sent; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the compaction sent no request:\n%s", tm.screen())
		}
	}
	time.Sleep(300 * time.Millisecond) // in its retry wait
	if took := tm.promptBack("Escape"); took > backWithin {
		t.Errorf("Esc during a compaction's retry wait: the prompt came back after %s, want within %s", took, backWithin)
	} else {
		t.Logf("Esc during a compaction: prompt back in %s", took.Round(time.Millisecond))
	}

	// Esc during a hook that takes its time stops that step: the call is
	// not made, and the model goes on.
	write, _ := json.Marshal(map[string]string{"path": "hooked.txt", "content": "x"})
	srv.Enqueue(llmtest.Reply{Text: "Writing.", ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: string(write)}}},
		llmtest.Reply{Text: "Not written, as you wish."})
	tm.typeLine("write it")
	tm.waitFor("the write call", "⚙ write_file")
	time.Sleep(300 * time.Millisecond) // the hook runs
	start = time.Now()
	tm.keys("Escape")
	tm.waitFor("the model's reply after the stopped hook", "Not written, as you wish.")
	if took := time.Since(start); took > backWithin {
		t.Errorf("Esc during a PreToolUse hook: the model's next reply came after %s, want within %s", took, backWithin)
	} else {
		t.Logf("Esc during a hook: the turn went on in %s", took.Round(time.Millisecond))
	}
	tm.waitPrompt()
	if _, err := os.Stat(filepath.Join(proj, "hooked.txt")); err == nil {
		t.Error("the write ran after Esc during its hook")
	}

	// A resize in the middle of a permission prompt, and back.
	srv.Enqueue(llmtest.Reply{Text: "Making it.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch resized-file"}`}}},
		llmtest.Reply{Text: "Made after the resize."})
	tm.typeLine("make a file")
	tm.waitFor("permission prompt", "╰ allow?")
	tm.run("resize-window", "-t", tm.name, "-x", "100", "-y", "30")
	waitRows(t, tm, func(rows []string) bool { return widest(rows) > 80 }) // the hint, on one row
	tm.run("resize-window", "-t", tm.name, "-x", "80", "-y", "24")
	waitRows(t, tm, func(rows []string) bool { return widest(rows) <= 80 })
	time.Sleep(200 * time.Millisecond)
	if n := strings.Count(tm.screen(), "❯ y  yes, once"); n != 1 {
		t.Errorf("the list of answers left %d highlighted rows after the resizes, want 1:\n%s", n, tm.screen())
	}
	tm.answer("y")
	tm.waitFor("the turn after the resize", "Made after the resize.")
	tm.waitPrompt()
	screen := tm.screen()
	for _, once := range []string{"mcp: slow ready (", "› make a file", "╰ allow?", "❯ yes, once", "Made after the resize."} {
		if n := strings.Count(screen, once); n != 1 {
			t.Errorf("%q is %d times on the screen and in the scrollback after the resizes, want once:\n%s", once, n, screen)
		}
	}
	var shown []string // what harness printed: the typed prompts are the user's
	for _, l := range strings.Split(screen, "\n") {
		if !strings.HasPrefix(l, "› ") {
			shown = append(shown, l)
		}
	}
	checkFits(t, strings.Join(shown, "\n"), 80)
	tm.keys("C-d")
	tm.waitExit()
}

// TestChatTmuxMCPNetPrompt, at 80×24: an MCP server whose start connects
// to the network (as npx -y does) asks beside the prompt; the question
// names the server and its own command, not the script harness wraps it
// in, and fits 80 columns; its start timeout (3 s here) does not run
// while the question waits (5 s), so after the answer the server comes
// up.
func TestChatTmuxMCPNetPrompt(t *testing.T) {
	bin := tmuxHarness(t)
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, testenv.Curl, "curl is not installed (CI installs it; apt install curl)")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bubblewrap is not installed (CI installs it)")
	}
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	slowMCPProject(t, home, proj, 0)
	// localhost through the proxy (no_proxy names it): nothing leaves the
	// machine, and the proxy refuses loopback even once allowed.
	script := fmt.Sprintf("#!/bin/sh\ncurl --noproxy '' -sS -m 20 http://localhost:80/ >/dev/null 2>&1\nexec %q\n", filepath.Join(proj, "bin", "mcp-test-server"))
	os.WriteFile(filepath.Join(proj, "bin", "fetching-server"), []byte(script), 0o755)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"netty": map[string]any{"command": filepath.Join(proj, "bin", "fetching-server"), "args": []string{"--from", "the-registry"},
			"env": map[string]string{mcptest.KindEnv: "full"}},
	}})
	os.WriteFile(filepath.Join(home, ".agents", "mcp.json"), cfg, 0o600)
	tm := startTmux(t, 80, 24, proj, append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "MCP_TIMEOUT=3000"), bin,
		"--project", proj, "--sandbox", "bwrap")
	tm.waitFor("the network question", "↑↓ Enter picks")
	s := words(strings.ReplaceAll(tm.screen(), "│", "")) // the box's rows, joined
	for _, want := range []string{"connect to the network", "localhost:80", "MCP server netty: " + filepath.Join(proj, "bin", "fetching-server") + " --from the-registry"} {
		if !strings.Contains(s, want) {
			t.Errorf("the question lacks %q:\n%s", want, tm.screen())
		}
	}
	if strings.Contains(s, "harness_kv") || strings.Contains(s, "# MCP server") {
		t.Errorf("the question shows harness's wrapper script:\n%s", tm.screen())
	}
	checkFits(t, tm.screen(), 80)
	time.Sleep(5 * time.Second) // past MCP_TIMEOUT, while the question waits
	tm.answer("n")
	tm.waitFor("the server up after the answer", "mcp: netty ready (")
	if strings.Contains(tm.screen(), "did not answer within") {
		t.Errorf("the start timed out while the question waited:\n%s", tm.screen())
	}
	tm.waitPrompt()
	tm.keys("C-d")
	tm.waitExit()
}

// TestChatTmuxEagerMCP, at 80×24: with MCP_TOOLS=eager the prompt still
// comes while a slow server starts; a prompt sent meanwhile waits for
// the start, saying so, and Esc brings the prompt back within a second;
// once the server is up, the next request lists its tools with their
// schemas.
func TestChatTmuxEagerMCP(t *testing.T) {
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	slowMCPProject(t, home, proj, 6*time.Second)
	tm := startTmux(t, 80, 24, proj, append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "MCP_TIMEOUT=60000", "MCP_TOOLS=eager"), bin,
		"--project", proj, "--allow", "mcp__slow")
	tm.waitPrompt()
	if s := tm.screen(); strings.Contains(s, "mcp: slow ready") {
		t.Fatalf("the prompt came only once the slow server was up:\n%s", s)
	}
	// The broken server's end first: the wait then names the slow one
	// alone, whatever the machine's speed (typed before, it named both
	// when the broken one's walls took longer to go up than the typing).
	tm.waitForWords("the broken server's failure", "mcp: broken failed:")
	tm.typeLine("hello while it starts")
	tm.waitForWords("the wait is said", "waiting for MCP servers to start (slow)")
	if took := tm.promptBack("Escape"); took > backWithin {
		t.Errorf("Esc while the first request waits for the starts: the prompt came back after %s, want within %s", took, backWithin)
	} else {
		t.Logf("Esc while waiting for the starts: prompt back in %s", took.Round(time.Millisecond))
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests went before the servers started", n)
	}
	tm.waitFor("the slow server up", "mcp: slow ready (")
	srv.Enqueue(llmtest.Reply{Text: "Tools seen."})
	tm.typeLine("hello again")
	tm.waitFor("the reply", "Tools seen.")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	names := reqs[0].Tools
	if !slices.Contains(names, "mcp__slow__echo") || slices.Contains(names, "mcp_search") {
		t.Errorf("the request's tools: %v", names)
	}
	tm.keys("C-d")
	tm.waitExit()
}
