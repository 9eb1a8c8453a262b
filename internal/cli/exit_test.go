package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestExitStatus runs Main in this process for every status that EXIT
// STATUS documents (130 is TestRunInterrupted's, with a real signal; 125,
// the inner stage failing its walls, is TestInnerStageFailureExits125's in
// package sandbox, and harness sandbox passes the command's status
// through, as the exit 7 case shows) and
// asserts the exact code and what stderr says. Errors are decided by type:
// a failure whose message merely contains "invalid argument" or "accepts "
// is a failure (1), not bad usage (2).
func TestExitStatus(t *testing.T) {
	home := t.TempDir()
	proj := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("NO_COLOR", "1")
	configured := map[string]string{"PROVIDER": "anthropic", "MODEL": "fake-model", "API_KEY": "sk-fake-key-for-tests-0123456789", "BASE_URL": "http://127.0.0.1:9"}
	srv := llmtest.NewServer(t)
	served := map[string]string{"PROVIDER": "anthropic", "MODEL": "fake-model", "API_KEY": "sk-fake-key-for-tests-0123456789", "BASE_URL": srv.URL}
	unconfigured := map[string]string{"PROVIDER": "", "MODEL": "", "API_KEY": "", "BASE_URL": ""}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
	for _, tc := range []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
		// replies, when set, are what the fake provider answers.
		replies []llmtest.Reply
	}{
		{"version", nil, []string{"--version"}, 0, `^$`, nil},
		{"help", nil, []string{"help", "permissions"}, 0, `^$`, nil},
		{"no prompt", configured, []string{"run"}, 2, `no prompt`, nil},
		{"prompt twice", configured, []string{"run", "-p", "a", "b"}, 2, `either as arguments or with -p`, nil},
		{"unknown flag", configured, []string{"run", "--no-such-flag", "hi"}, 2, `unknown flag: --no-such-flag`, nil},
		{"unknown shorthand", nil, []string{"-Z"}, 2, `unknown shorthand flag: 'Z'`, nil},
		{"bad flag value", configured, []string{"run", "--max-steps", "many", "hi"}, 2, `invalid argument "many"`, nil},
		{"flag without value", configured, []string{"run", "--model"}, 2, `flag needs an argument`, nil},
		{"unknown command", nil, []string{"frobnicate"}, 2, `unknown command "frobnicate"`, nil},
		{"too many args", nil, []string{"sessions", "show", "a", "b"}, 2, `accepts at most 1 arg`, nil},
		{"bad output format", configured, []string{"run", "--output-format", "yaml", "hi"}, 2, `output-format must be`, nil},
		{"sandbox without command", nil, []string{"sandbox"}, 2, `no command given`, nil},
		{"bench unknown strategy", nil, []string{"bench", "context", "--strategy", "nosuch", "."}, 2, `unknown strategy "nosuch"`, nil},
		{"not configured", unconfigured, []string{"run", "--project", proj, "hi"}, 1, `harness is not configured`, nil},
		// Before, both were taken for bad usage because of their text.
		{"failure saying invalid argument", configured, []string{"run", "--project", filepath.Join(proj, "invalid argument"), "hi"}, 1, `invalid argument: no such file`, nil},
		{"failure saying accepts", configured, []string{"run", "--project", filepath.Join(proj, "accepts 2 args"), "hi"}, 1, `accepts 2 args: no such file`, nil},
		{"sandboxed command's own status", nil, []string{"sandbox", "--backend", "none", "--project", proj, "--", "sh", "-c", "exit 7"}, 7, `no sandbox`, nil},
		{"sandboxed command timed out", nil, []string{"sandbox", "--backend", "none", "--project", proj, "--timeout", "200ms", "--", "sleep", "30"}, 124, `timed out`, nil},
		// A headless run in which a call needed an approval it cannot ask for.
		{"needs approval", served, []string{"run", "--sandbox", "none", "--project", proj, "make a file"}, 3, `1 call\(s\) were refused for want of an approval`,
			[]llmtest.Reply{{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"touch made-by-agent"}`}}}, {Text: "ok"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			srv.Enqueue(tc.replies...)
			var out, errb bytes.Buffer
			code := Main(context.Background(), tc.args, Stdio{In: bytes.NewReader(nil), Out: &out, Err: &errb})
			if code != tc.code {
				t.Errorf("harness %q exited %d, want %d; stderr:\n%s", tc.args, code, tc.code, errb.String())
			}
			if !regexp.MustCompile(tc.stderr).Match(errb.Bytes()) {
				t.Errorf("harness %q: stderr %q does not match %q", tc.args, errb.String(), tc.stderr)
			}
		})
	}
}

// TestEveryCommandSaysItsExitStatus: every command's --help ends with its
// exit statuses (docs/commands.md says so), and only the commands that handle
// SIGINT or SIGTERM themselves (TestRunInterrupted, TestChatTerminated)
// promise 130 for them.
func TestEveryCommandSaysItsExitStatus(t *testing.T) {
	handlesSignals := map[string]bool{"harness": true, "harness run": true, "harness batch": true, "harness batch ab": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() { // a help topic or a group: nothing exits
			return
		}
		t.Run(c.CommandPath(), func(t *testing.T) {
			_, status, ok := strings.Cut(c.Long, "\nEXIT STATUS\n")
			if !ok {
				t.Fatalf("%q's help has no EXIT STATUS", c.CommandPath())
			}
			if promises := strings.Contains(status, "130"); promises != handlesSignals[c.CommandPath()] {
				t.Errorf("%q's EXIT STATUS promises 130 for a signal: %v, but the command handles signals: %v:\n%s", c.CommandPath(), promises, handlesSignals[c.CommandPath()], status)
			}
		})
	}
	walk(newRootCommand(Stdio{}))
}
