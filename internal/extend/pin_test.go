package extend

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// TestNamedPaths: the files a hook's command runs are found in every
// shape Claude Code's hooks take them.
func TestNamedPaths(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(proj, "tool.py"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(proj, "Makefile"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(proj, ".agents"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agents", "x.sh"), []byte("x"), 0o644)
	env := []string{"HOME=" + home}
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"./hooks/pre.sh", []string{proj + "/hooks/pre.sh"}},
		{"bash .agents/x.sh arg", []string{proj + "/.agents/x.sh"}},
		{"python3 tool.py", []string{proj + "/tool.py"}},
		{`node "$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.js`, []string{proj + "/.claude/hooks/fmt.js"}},
		{"sh -c 'true' && ~/bin/notify.sh done", []string{home + "/bin/notify.sh"}},
		{"make -f Makefile --file=./other.mk", []string{proj + "/Makefile", proj + "/other.mk"}},
		{"bash < ./in.sh", []string{proj + "/in.sh"}},
		{"echo hello world", nil},
		{"sed 's/^/saw /' | cat src/missing.txt", nil},
		{"./log.sh >> hook.log 2>&1", []string{proj + "/log.sh"}},
		{"notify-send $(./gen.sh)", []string{proj + "/gen.sh"}},
	} {
		got := namedPaths(c.cmd, proj, env)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.cmd, got, c.want)
		}
	}
}

// hookEnv is a project and home with a policy, for hooks as a session
// reads them (sandbox none: a "project" hook runs on this machine, so a
// marker proves whether it ran at all).
func hookEnv(t *testing.T) (proj, home, outside string, pol *walls.Policy) {
	t.Helper()
	proj, home, outside = t.TempDir(), t.TempDir(), t.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	return proj, home, outside, pol
}

func writeHook(t *testing.T, path, event, cmd string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	data := `{"hooks":{"` + event + `":[{"hooks":[{"type":"command","command":` + quoteJSON(cmd) + `}]}]}}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// TestApprovedScriptRewritten: an approved project hook runs its script
// only while the script is as approved. Rewritten mid-session, the new
// content never runs: interactive, the user is asked again (and a no
// keeps it from running); headless, it is refused with a notice.
func TestApprovedScriptRewritten(t *testing.T) {
	for _, headless := range []bool{false, true} {
		name := "interactive"
		if headless {
			name = "headless"
		}
		t.Run(name, func(t *testing.T) {
			proj, home, outside, pol := hookEnv(t)
			script := filepath.Join(proj, "hooks", "pre.sh")
			os.MkdirAll(filepath.Dir(script), 0o755)
			os.WriteFile(script, []byte("echo approved\n"), 0o755)
			writeHook(t, filepath.Join(proj, ".claude", "settings.json"), UserPromptSubmit, "sh ./hooks/pre.sh")
			o := HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, nil), Sandbox: &sandbox.None{L: walls.NewLive(pol)},
				Read: policyReader(pol), ApprovalFile: filepath.Join(home, ".agents", "hooks-approved")}
			ap := &fakeApprover{answers: []bool{true, false}}
			if headless {
				o.AllowProject = true
			} else {
				o.Approver = ap
			}
			h, warns := NewHooks(o)
			if len(warns) > 0 {
				t.Fatal(warns)
			}
			ctx := context.Background()
			if got := h.Fire(ctx, Event{Name: UserPromptSubmit}).Context; got != "approved" {
				t.Fatalf("approved hook: %q", got)
			}
			marker := filepath.Join(outside, "planted")
			os.WriteFile(script, []byte("touch "+marker+"; echo planted\n"), 0o755)
			out := h.Fire(ctx, Event{Name: UserPromptSubmit})
			if _, err := os.Stat(marker); err == nil || out.Context != "" {
				t.Fatalf("the rewritten script ran: %+v", out)
			}
			if headless {
				if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], "changed since") {
					t.Fatalf("headless refusal not said: %q", out.Notices)
				}
			} else if len(ap.asked) != 2 {
				t.Fatalf("not asked again: %q", ap.asked)
			}
			// Put back as approved, it runs again without asking.
			os.WriteFile(script, []byte("echo approved\n"), 0o755)
			if got := h.Fire(ctx, Event{Name: UserPromptSubmit}).Context; got != "approved" {
				t.Fatalf("restored script: %q", got)
			}
		})
	}
}

// TestUserSettingsIntoProject: the user's own settings file that is a
// link into the project, a --settings file inside it, and a user hook
// running a project script are the project's: not run without approval;
// headless, said at the start.
func TestUserSettingsIntoProject(t *testing.T) {
	proj, home, outside, pol := hookEnv(t)
	marker := filepath.Join(outside, "ran")
	planted := filepath.Join(proj, "planted.json")
	writeHook(t, planted, UserPromptSubmit, "touch "+marker+"-link")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	if err := os.Symlink(planted, filepath.Join(home, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	flag := filepath.Join(proj, "x.json")
	writeHook(t, flag, UserPromptSubmit, "touch "+marker+"-flag")
	writeHook(t, filepath.Join(home, ".agents", "settings.json"), UserPromptSubmit, "sh $CLAUDE_PROJECT_DIR/run.sh")
	os.WriteFile(filepath.Join(proj, "run.sh"), []byte("touch "+marker+"-script\n"), 0o755)
	h, warns := NewHooks(HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, []string{flag}), Required: []string{flag},
		Sandbox: &sandbox.None{L: walls.NewLive(pol)}, Read: policyReader(pol), Env: []string{"HOME=" + home}})
	if len(warns) != 3 {
		t.Fatalf("want 3 warnings at the start, got %q", warns)
	}
	for _, w := range []string{"resolves to " + planted, flag + " lies where commands can write", "runs " + filepath.Join(proj, "run.sh")} {
		found := false
		for _, e := range warns {
			found = found || strings.Contains(e.Error(), w)
		}
		if !found {
			t.Errorf("no warning says %q: %q", w, warns)
		}
	}
	h.Fire(context.Background(), Event{Name: UserPromptSubmit})
	for _, m := range []string{"-link", "-flag", "-script"} {
		if _, err := os.Stat(marker + m); err == nil {
			t.Errorf("hook %s ran without approval", m)
		}
	}
}

// TestSettingsReadOnce: a hook added mid-session to any settings file
// never runs in that session.
func TestSettingsReadOnce(t *testing.T) {
	proj, home, outside, pol := hookEnv(t)
	flag := filepath.Join(outside, "s.json")
	os.WriteFile(flag, []byte(`{}`), 0o644)
	h, warns := NewHooks(HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, []string{flag}), Required: []string{flag},
		Sandbox: &sandbox.None{L: walls.NewLive(pol)}, Read: policyReader(pol), AllowProject: true})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	marker := filepath.Join(outside, "ran")
	for _, f := range append([]string{flag}, DefaultSettingsFiles(proj, home, nil).Project...) {
		writeHook(t, f, UserPromptSubmit, "touch "+marker)
	}
	h.Fire(context.Background(), Event{Name: UserPromptSubmit})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook added mid-session ran")
	}
	if len(h.List()) != 0 {
		t.Fatalf("/help lists hooks added mid-session: %v", h.List())
	}
}

// BenchmarkLook is what pinning costs a hook at each event: parse its
// command, find the files it names, hash those commands can write
// (through the policy, as a session reads them).
func BenchmarkLook(b *testing.B) {
	proj, home := b.TempDir(), b.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(filepath.Join(proj, "hooks"), 0o755)
	os.WriteFile(filepath.Join(proj, "hooks", "pre.sh"), []byte(strings.Repeat("echo checking the call\n", 200)), 0o755)
	h := &Hooks{o: HookOptions{Project: proj, Read: policyReader(pol)}}
	k := Hook{Event: PreToolUse, Command: `bash "$CLAUDE_PROJECT_DIR"/hooks/pre.sh --strict >> hook.log`, Project: true}
	b.ResetTimer()
	for range b.N {
		if got := h.look(k); len(got.Scripts) != 1 {
			b.Fatal(got.Scripts)
		}
	}
}
