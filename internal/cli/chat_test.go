package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/ui"
)

// chatEnv points harness at a fake provider for runChat: a private home,
// the provider and model, a fake key.
func chatEnv(t *testing.T, provider, model string) (srv *llmtest.Server, home string) {
	t.Helper()
	srv = llmtest.NewServer(t)
	home = t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CACHE_HOME": filepath.Join(home, ".cache"), "BASE_URL": srv.URL,
		"PROVIDER": provider, "MODEL": model, "API_KEY": "sk-fake-key-for-tests-0123456789",
	} {
		t.Setenv(k, v)
	}
	return srv, home
}

// chatPiped runs the interactive loop on proj with in as its input and
// returns what it wrote to stdout and stderr.
func chatPiped(t *testing.T, proj, in string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalOptions{Project: proj, Backend: "auto"}
	if err := runChat(context.Background(), g, Stdio{In: strings.NewReader(in), Out: &out, Err: &errb}); err != nil {
		t.Fatalf("runChat: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestChatPiped runs the interactive loop with piped input, as a script or
// an editor integration would: no terminal, so no colours, no spinner and
// no redraws, and every slash command still answers.
func TestChatPiped(t *testing.T) {
	srv, _ := chatEnv(t, "anthropic", "claude-haiku-4-5")
	proj := t.TempDir()
	// A net rule of the project's, for /sandbox and /network to show.
	os.MkdirAll(filepath.Join(proj, ".agents"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agents", "permissions"), []byte("allow net @go\n"), 0o644)
	srv.Enqueue(
		llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch piped-file"}`}}},
		llmtest.Reply{Text: "Refused, fine: **no file**."},
		llmtest.Reply{Text: "answered by the new model"},
	)
	in := strings.Join([]string{
		"/help",
		"make a file",
		"use the editor instead", // the answer to the permission prompt: a refusal with a reason
		"/context",
		"/cost",
		"/model gpt-4o",
		"which model?",
		"/sandbox",
		"/network",
		"/permissions",
		"/sessions",
		"/todos",
		"/bogus",
		"/clear",
		"/sessions",
		"/exit",
	}, "\n") + "\n"
	got, _ := chatPiped(t, proj, in)
	if strings.Contains(got, "\x1b") {
		t.Errorf("escape sequences in piped output:\n%q", got)
	}
	for _, want := range []string{
		"harness ", "model    claude-haiku-4-5 via anthropic", // banner
		"/compact [focus]",                                   // help
		"⚙ bash  touch piped-file", "rule: ", "y  yes, once", // the prompt
		"Refused, fine: **no file**.", // streamed text kept raw without a terminal
		"─ claude-haiku-4-5 · ctx",    // status line
		"context ", "tool output",     // /context
		"cache read", // /cost
		"model gpt-4o from the next turn on",
		"sandbox ", "writable", "network    allow net @go", "           ask net *", // /sandbox
		"network rules\n  allow net @go", // /network
		"built-in defaults: ",            // /permissions
		"/resume ID switches to one",     // /sessions
		"no plan yet",                    // /todos
		"unknown command /bogus; /help lists them",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", got)
	}
	// The refusal's reason reached the model with the tool result.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the fake saw %d requests, want 3", len(reqs))
	}
	if reqs[1].Model != "claude-haiku-4-5" || reqs[2].Model != "gpt-4o" {
		t.Errorf("models %q, %q; want claude-haiku-4-5 then gpt-4o after /model", reqs[1].Model, reqs[2].Model)
	}
	if n := len(reqs[2].Messages); n < 5 {
		t.Errorf("after /model the conversation went on with %d messages, want it kept", n)
	}
	// /clear started a second session; /sessions lists both, the new one
	// current and not yet saved (it has no message).
	if !strings.Contains(got, "new session ") || strings.Count(got, " steps ") < 2 ||
		!strings.Contains(got, "this session: new, saved once it has a message") {
		t.Errorf("/clear then /sessions did not show the saved session and the new one")
	}
	if b := reqs[1].Messages[len(reqs[1].Messages)-1]; !strings.Contains(b.Blocks[0].Content, "use the editor instead") {
		t.Errorf("the refusal reason did not reach the model: %+v", b)
	}
	// And the refused command did not run: no file appeared.
	if _, err := os.Stat(filepath.Join(proj, "piped-file")); !os.IsNotExist(err) {
		t.Errorf("the refused command ran: piped-file exists (%v)", err)
	}
}

// TestChatEOFQuits: the end of input ends the session without an error.
func TestChatEOFQuits(t *testing.T) {
	chatEnv(t, "openai", "some-local-model")
	if out, _ := chatPiped(t, t.TempDir(), ""); !strings.Contains(out, "some-local-model") {
		t.Errorf("no banner:\n%s", out)
	}
}

// TestChatCommandsCheck: commands that would waste a call or mislead
// refuse plainly. /compact on an empty session does not call the model;
// /model takes only a catalogue name (or !NAME); /permissions fits the
// terminal's 80 columns, a long rule shortened, never wrapped.
func TestChatCommandsCheck(t *testing.T) {
	srv, _ := chatEnv(t, "anthropic", "claude-haiku-4-5")
	proj := t.TempDir()
	long := "allow bash " + filepath.Join(proj, strings.Repeat("very-long-directory-name/", 6), "build.sh") + " *\n"
	if err := os.MkdirAll(filepath.Join(proj, ".agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".agents", "permissions"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Reply{Text: "still the first model"})
	in := strings.Join([]string{
		"/compact",
		"/model claude-sonet-4-5", // a typo
		"hello",
		"/model !my-local-model",
		"/permissions",
		"/exit",
	}, "\n") + "\n"
	out, errb := chatPiped(t, proj, in)
	got := out + errb
	for _, want := range []string{
		"nothing to compact yet: the session has no messages",
		`"claude-sonet-4-5" is not in the model catalogue`,
		"model my-local-model from the next turn on",
		"allow bash " + proj[:12], "-name/build.sh *", "…",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1: /compact on an empty session called the model", len(reqs))
	}
	if reqs[0].Model != "claude-haiku-4-5" {
		t.Errorf("the unknown model name was taken: the turn went to %q", reqs[0].Model)
	}
	if !strings.Contains(got, "  .agents/permissions:1") || !strings.Contains(got, "write only under the project") {
		t.Errorf("/permissions names the project's paths in full:\n%s", got)
	}
	perms := out[strings.Index(out, "from the next turn on"):]
	for _, l := range strings.Split(perms, "\n")[1:] {
		if w := ui.StringWidth(l); w > 80 {
			t.Errorf("a /permissions row is %d columns wide (the terminal has 80): %q", w, l)
		}
	}
}
