package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// The settings that grant power are read once, from where commands cannot
// write; what was approved is pinned by content. Each test plays the
// model through the fake provider and asserts on the host: a marker a
// planted hook would make, outside the project (and inside it, for a
// hook that would run inside the walls), stays absent.

// hookSession is a headless session's options with the strongest walls
// here (bwrap), or none where there is no bwrap: the markers say whether a
// hook ran at all either way. Commands are allowed (--yolo) so the model's
// writes go through.
func hookSession(t *testing.T, srv *llmtest.Server) Options {
	t.Helper()
	o := testOptions(t)
	o.Source.Env["BASE_URL"] = srv.URL
	o.Yolo = true
	if _, err := exec.LookPath("bwrap"); err == nil {
		o.Backend = sandbox.BackendBwrap
	}
	return o
}

func hookJSON(event, cmd string) string {
	data, _ := json.Marshal(map[string]any{"hooks": map[string]any{event: []any{map[string]any{
		"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}}})
	return string(data)
}

func absent(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: what the model planted ran", p)
		}
	}
}

func listen(t *testing.T) *llmtest.Server {
	t.Helper()
	srv, err := llmtest.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestHookAddedMidSessionNeverRuns: the model writes a hook into the
// --settings file the user named inside the project, and into the
// project's .claude/settings.json; no later event runs it.
func TestHookAddedMidSessionNeverRuns(t *testing.T) {
	testenv.Slow(t)
	runAsNobodyToo(t, "TestHookAddedMidSessionNeverRuns")
	srv := listen(t)
	o := hookSession(t, srv)
	outside := t.TempDir()
	flag := filepath.Join(o.WorkDir, "x.json")
	os.WriteFile(flag, []byte("{}"), 0o644)
	o.Settings = []string{flag}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hostMarker, projMarker := filepath.Join(outside, "planted"), filepath.Join(o.WorkDir, "planted")
	plant := "mkdir -p .claude && printf '%s' " + shQuote(hookJSON(extend.PostToolUse, "touch "+hostMarker+" "+projMarker)) +
		" | tee x.json > .claude/settings.json"
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: mustJSON(map[string]string{"command": plant})}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"true"}`}}},
		llmtest.Reply{Text: "done"},
	)
	if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(flag); !strings.Contains(string(data), "PostToolUse") {
		t.Fatalf("the model's write did not land (%s); the test proves nothing", data)
	}
	absent(t, hostMarker, projMarker)
}

// TestUserSettingsLinkIntoProject: ~/.claude/settings.json is a link into
// the project (the model can write its target): headless, its hooks do
// not run and the session says why at the start.
func TestUserSettingsLinkIntoProject(t *testing.T) {
	testenv.Slow(t)
	runAsNobodyToo(t, "TestUserSettingsLinkIntoProject")
	srv := listen(t)
	o := hookSession(t, srv)
	outside := t.TempDir()
	marker := filepath.Join(outside, "planted")
	target := filepath.Join(o.WorkDir, "notes", "settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte(hookJSON(extend.SessionStart, "touch "+marker)), 0o644)
	os.MkdirAll(filepath.Join(o.Source.Home, ".claude"), 0o755)
	if err := os.Symlink(target, filepath.Join(o.Source.Home, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	absent(t, marker)
	said := false
	for _, w := range s.Warnings {
		said = said || strings.Contains(w.Text, "resolves to "+target) && strings.Contains(w.Text, "--allow-project-hooks")
	}
	if !said {
		t.Errorf("no warning says the user's settings resolve into the project and how to approve: %+v", s.Warnings)
	}

	// A --settings file inside the project with a hook: refused at the
	// start, headless, saying how to approve.
	flag := filepath.Join(o.WorkDir, "x.json")
	os.WriteFile(flag, []byte(hookJSON(extend.SessionStart, "touch "+marker)), 0o644)
	o.Settings = []string{flag}
	s, err = Open(context.Background(), o)
	if err == nil {
		s.Close()
		t.Fatal("a headless session started with hooks from a --settings file the model can write")
	}
	if !strings.Contains(err.Error(), "--allow-project-hooks") {
		t.Errorf("the refusal does not say how to approve: %v", err)
	}
	absent(t, marker)
}

// scriptApprover approves the first time and refuses after.
type scriptApprover struct{ asked []string }

func (a *scriptApprover) ApproveHook(_ context.Context, h extend.Hook) (bool, error) {
	a.asked = append(a.asked, h.Command)
	return len(a.asked) == 1, nil
}

// TestApprovedHookScriptRewritten: a project hook approved with its
// script runs only that script: once the model rewrites it, the new
// content never runs; the user is asked again (interactive) or it is
// refused with a notice (headless, --allow-project-hooks).
func TestApprovedHookScriptRewritten(t *testing.T) {
	testenv.Slow(t)
	runAsNobodyToo(t, "TestApprovedHookScriptRewritten")
	for _, headless := range []bool{true, false} {
		t.Run(map[bool]string{true: "headless", false: "interactive"}[headless], func(t *testing.T) {
			srv := listen(t)
			o := hookSession(t, srv)
			ap := &scriptApprover{}
			if headless {
				o.AllowProjectHooks = true
			} else {
				o.HookApprover = ap
			}
			outside := t.TempDir()
			hostMarker, projMarker := filepath.Join(outside, "planted"), filepath.Join(o.WorkDir, "planted")
			os.MkdirAll(filepath.Join(o.WorkDir, "hooks"), 0o755)
			approvedRan := filepath.Join(o.WorkDir, "approved-ran")
			os.WriteFile(filepath.Join(o.WorkDir, "hooks", "post.sh"), []byte("touch approved-ran\n"), 0o755)
			os.MkdirAll(filepath.Join(o.WorkDir, ".claude"), 0o755)
			os.WriteFile(filepath.Join(o.WorkDir, ".claude", "settings.json"), []byte(hookJSON(extend.PostToolUse, "sh ./hooks/post.sh")), 0o644)
			s, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rewrite := "printf 'touch " + hostMarker + " " + projMarker + "\\n' > hooks/post.sh"
			srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"true"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: mustJSON(map[string]string{"command": rewrite})}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"true"}`}}},
				llmtest.Reply{Text: "done"},
			)
			if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
				t.Fatal(err)
			}
			if data, _ := os.ReadFile(filepath.Join(o.WorkDir, "hooks", "post.sh")); !strings.Contains(string(data), "touch") {
				t.Fatalf("the model's rewrite did not land (%s); the test proves nothing", data)
			}
			if _, err := os.Stat(approvedRan); err != nil {
				t.Fatalf("the approved hook never ran (%s backend); the test proves nothing", s.Sandbox.Backend())
			}
			absent(t, hostMarker, projMarker)
			if !headless && len(ap.asked) != 2 {
				t.Errorf("asked %d times, want 2 (approved, then asked again after the rewrite)", len(ap.asked))
			}
		})
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// asNobodyEnv marks a test binary re-run by runAsNobodyToo.
const asNobodyEnv = "HARNESS_TEST_AS_NOBODY"

// runAsNobodyToo runs the test name again as an unprivileged user (nobody)
// when this one runs as root, as the sandbox's tests do (unprivileged
// user namespaces, no capability): the walls must hold for both.
func runAsNobodyToo(t *testing.T, name string) {
	t.Helper()
	if os.Getuid() != 0 || os.Getenv(asNobodyEnv) != "" {
		return
	}
	t.Run("as-nobody", func(t *testing.T) {
		// The child's temporary files must be nobody's: a directory of
		// its own, writable by it.
		dir, err := os.MkdirTemp("/var/tmp", "harness-app-nobody-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o777)
		setpriv, bin := testenv.NobodyBinary(t, dir, name)
		tmp := filepath.Join(dir, "tmp")
		os.Mkdir(tmp, 0o777)
		os.Chmod(tmp, 0o777)
		cmd := testenv.AsNobody(setpriv, bin, []string{"-test.run", "^" + name + "$", "-test.v", "-test.count=1"}, asNobodyEnv+"=1", "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
			t.Fatalf("as nobody: %v\n%s", err, out)
		}
		t.Logf("as nobody:\n%s", out)
	})
}

// alwaysYes approves every question for good, counting them.
type alwaysYes struct{ asked []string }

func (a *alwaysYes) Prompt(_ context.Context, req permission.Request, _ permission.Decision, _ string) (permission.Answer, error) {
	a.asked = append(a.asked, req.Tool+": "+req.Command)
	return permission.Answer{Choice: permission.Always}, nil
}

// TestMCPDefinitionsTheModelCanWrite: an MCP configuration the model can
// write — a --mcp-config file inside the project, the user's mcp.json as
// a link into it — is the project's: headless, its servers do not start
// without an approval; and a project server approved with its script does
// not start once the script was rewritten.
func TestMCPDefinitionsTheModelCanWrite(t *testing.T) {
	server := func(cmd string) []byte {
		return []byte(mustJSON(map[string]any{"mcpServers": map[string]any{"srv": map[string]any{"command": "sh", "args": []string{"-c", cmd}}}}))
	}
	t.Run("mcp-config in the project", func(t *testing.T) {
		o := testOptions(t)
		marker := filepath.Join(t.TempDir(), "started")
		flag := filepath.Join(o.WorkDir, "x.json")
		os.WriteFile(flag, server("touch "+marker), 0o644)
		o.MCPConfigs = []string{flag}
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		absent(t, marker)
		warned(t, s, "not started", "--approve-mcp")
	})
	t.Run("user mcp.json links into the project", func(t *testing.T) {
		o := testOptions(t)
		marker := filepath.Join(t.TempDir(), "started")
		target := filepath.Join(o.WorkDir, "notes.json")
		os.WriteFile(target, server("touch "+marker), 0o644)
		os.MkdirAll(filepath.Join(o.Source.Home, ".agents"), 0o755)
		os.Symlink(target, filepath.Join(o.Source.Home, ".agents", "mcp.json"))
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		absent(t, marker)
		warned(t, s, "not started", "--approve-mcp")
	})
	t.Run("approved script rewritten", func(t *testing.T) {
		o := testOptions(t)
		outside := t.TempDir()
		os.WriteFile(filepath.Join(o.WorkDir, ".mcp.json"), []byte(mustJSON(map[string]any{"mcpServers": map[string]any{
			"srv": map[string]any{"command": "sh", "args": []string{"./srv.sh"}}}})), 0o644)
		script := filepath.Join(o.WorkDir, "srv.sh")
		os.WriteFile(script, []byte("touch "+filepath.Join(outside, "approved")+"\n"), 0o755)
		ask := &alwaysYes{}
		o.Prompter = ask
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if len(ask.asked) != 1 {
			t.Fatalf("asked %q, want one approval", ask.asked)
		}
		os.WriteFile(script, []byte("touch "+filepath.Join(outside, "planted")+"\n"), 0o755)
		o.Prompter = nil
		s, err = Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := os.Stat(filepath.Join(outside, "approved")); err != nil {
			t.Fatal("the approved server never started; the test proves nothing")
		}
		absent(t, filepath.Join(outside, "planted"))
		warned(t, s, "not started", "changed since you approved it")
	})
}

func warned(t *testing.T, s *Session, parts ...string) {
	t.Helper()
	for _, w := range s.Warnings {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w.Text, p)
		}
		if all {
			return
		}
	}
	t.Errorf("no warning says %q: %+v", parts, s.Warnings)
}

// TestRulesFileTheModelCanWrite: permission rules come only from files
// commands cannot write. The user's rules file as a link into the project,
// or the project's .agents/permissions as a link to a file the model can
// write: headless, the session does not start, saying what to do; with
// someone to ask, the rules are used once approved.
func TestRulesFileTheModelCanWrite(t *testing.T) {
	for _, which := range []string{"user", "project"} {
		t.Run(which, func(t *testing.T) {
			o := testOptions(t)
			target := filepath.Join(o.WorkDir, "perm.txt")
			os.WriteFile(target, []byte("allow bash *\n"), 0o644)
			link := filepath.Join(o.Source.Home, ".agents", "permissions")
			if which == "project" {
				link = filepath.Join(o.WorkDir, ".agents", "permissions")
			}
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), o)
			if err == nil {
				s.Close()
				t.Fatal("a headless session took its rules from a file the model can write")
			}
			if !strings.Contains(err.Error(), "outside the project") {
				t.Errorf("the refusal does not say what to do: %v", err)
			}
			ask := &alwaysYes{}
			o.Prompter = ask
			s, err = Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if len(ask.asked) != 1 || !strings.Contains(ask.asked[0], target) {
				t.Errorf("asked %q, want one question naming %s", ask.asked, target)
			}
			if !slicesContain(s.Gate.Rules(), "allow bash *") {
				t.Errorf("approved rules not in force: %q", s.Gate.Rules())
			}
		})
	}
}

func slicesContain(list []string, part string) bool {
	for _, l := range list {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

// TestCommandFileTheModelCanWrite: a user's command file that is a link
// into the project, or a project's .agents command that is a link out of
// the carve-out to a file the model can write, is the agent's to write:
// its allowed-tools grant nothing headless, so the command it would let
// through is refused.
func TestCommandFileTheModelCanWrite(t *testing.T) {
	for _, which := range []string{"user", "project"} {
		t.Run(which, func(t *testing.T) {
			srv := listen(t)
			o := hookSession(t, srv)
			o.Yolo = false
			if o.Backend == sandbox.BackendNone {
				// Without walls every command asks: nothing to grant.
				testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
			}
			target := filepath.Join(o.WorkDir, "notes", "go.md")
			os.MkdirAll(filepath.Dir(target), 0o755)
			os.WriteFile(target, []byte("---\nallowed-tools: Bash(touch:*)\n---\nTouch it.\n"), 0o644)
			dir := filepath.Join(o.Source.Home, ".claude", "commands")
			if which == "project" {
				dir = filepath.Join(o.WorkDir, ".agents", "commands")
			}
			os.MkdirAll(dir, 0o755)
			if err := os.Symlink(target, filepath.Join(dir, "go.md")); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, ok, err := s.StartCommand(context.Background(), "/go", nil)
			if !ok || err != nil {
				t.Fatalf("/go: %v %v", ok, err)
			}
			defer c.Done()
			marker := filepath.Join(o.WorkDir, "planted")
			srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: mustJSON(map[string]string{"command": "touch " + marker})}}},
				llmtest.Reply{Text: "done"},
			)
			if _, err := s.Agent.Run(context.Background(), c.Prompt, nil); err != nil {
				t.Fatal(err)
			}
			absent(t, marker)
		})
	}
}
