package extend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		name string
		cmd  Command
		args string
		want string
	}{
		{"arguments", Command{Body: "Fix #$ARGUMENTS now"}, "12 a", "Fix #12 a now"},
		{"positional", Command{Body: "PR $1 prio $2, $3."}, `7 "very high"`, "PR 7 prio very high, ."},
		{"appended", Command{Body: "Review.\n"}, "x y", "Review.\n\nARGUMENTS: x y"},
		{"no args", Command{Body: "Review."}, "", "Review."},
		{"dollar kept", Command{Body: "cost $x and $"}, "", "cost $x and $"},
		{"gemini", Command{Body: "Fix: {{args}}", gemini: true}, "bug", "Fix: bug"},
		{"gemini appended", Command{Name: "git:fix", Body: "Fix.", gemini: true}, "bug", "Fix.\n\n/git:fix bug"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cmd.Expand(c.args); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestProjectHookApproval: a project hook runs only once its exact
// definition is approved; the settings are read once, so a definition
// changed mid-session changes nothing until the next session, which asks
// about it anew; a refused one does not run.
func TestProjectHookApproval(t *testing.T) {
	proj, home := t.TempDir(), t.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(proj, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	write := func(cmd string) {
		os.WriteFile(settings, []byte(`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"`+cmd+`"}]}]}}`), 0o644)
	}
	write("echo v1")
	ap := &fakeApprover{answers: []bool{true, false}}
	opts := func(a Approver) HookOptions {
		return HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, nil), Sandbox: &sandbox.None{L: walls.NewLive(pol)},
			Read: policyReader(pol), Approver: a, ApprovalFile: filepath.Join(home, ".agents", "hooks-approved")}
	}
	h, warns := NewHooks(opts(ap))
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	ctx := context.Background()
	fire := func(h *Hooks) string { return h.Fire(ctx, Event{Name: UserPromptSubmit, Prompt: "p"}).Context }
	if got := fire(h); got != "v1" || len(ap.asked) != 1 {
		t.Fatalf("approved v1: context %q, asked %d", got, len(ap.asked))
	}
	if got := fire(h); got != "v1" || len(ap.asked) != 1 {
		t.Fatalf("approved v1 asked again or did not run: %q %d", got, len(ap.asked))
	}
	write("echo v2")
	if got := fire(h); got != "v1" || len(ap.asked) != 1 {
		t.Fatalf("settings re-read mid-session: context %q, asked %v", got, ap.asked)
	}
	h, _ = NewHooks(opts(ap))
	if got := fire(h); got != "" || len(ap.asked) != 2 || ap.asked[1] != "echo v2" {
		t.Fatalf("changed definition, next session: context %q, asked %v", got, ap.asked)
	}
	if got := fire(h); got != "" || len(ap.asked) != 2 {
		t.Fatalf("refused definition ran or was asked again: %q %v", got, ap.asked)
	}
	// The approval is remembered outside the project, for v1 only.
	write("echo v1")
	h2, _ := NewHooks(opts(nil))
	if got := fire(h2); got != "v1" {
		t.Fatalf("remembered approval: %q", got)
	}
	write("echo v3")
	h3, warns := NewHooks(opts(nil))
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "not approved") || !strings.Contains(warns[0].Error(), "--allow-project-hooks") {
		t.Fatalf("headless, unapproved, not said at the start: %v", warns)
	}
	if o := h3.Fire(ctx, Event{Name: UserPromptSubmit}); o.Context != "" || len(o.Notices) != 0 {
		t.Fatalf("headless, unapproved: %+v", o)
	}
}

// policyReader reads as a session does.
func policyReader(pol *walls.Policy) Reader {
	return Reader{
		Open: func(path string) (*os.File, string, error) {
			f, real, _, err := pol.OpenRead(path)
			return f, real, err
		},
		Reach: pol.Reachable,
	}
}

type fakeApprover struct {
	answers []bool
	asked   []string
}

func (f *fakeApprover) ApproveHook(_ context.Context, h Hook) (bool, error) {
	f.asked = append(f.asked, h.Command)
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func TestInterpret(t *testing.T) {
	k := Hook{Command: "x"}
	for _, c := range []struct {
		name  string
		event string
		r     hookResult
		check func(Outcome) bool
	}{
		{"exit 2 blocks a call", PreToolUse, hookResult{code: 2, stderr: "nope"}, func(o Outcome) bool { return o.Block && o.Reason == "nope" }},
		{"exit 1 does not block", PreToolUse, hookResult{code: 1, stderr: "oops"}, func(o Outcome) bool { return !o.Block && len(o.Notices) == 1 }},
		{"json deny", PreToolUse, hookResult{stdout: `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"r"}}`}, func(o Outcome) bool { return o.Block && o.Reason == "r" }},
		{"json allow", PreToolUse, hookResult{stdout: `{"hookSpecificOutput":{"permissionDecision":"allow"}}`}, func(o Outcome) bool { return !o.Block && o.Permission == "allow" }},
		{"legacy block", PreToolUse, hookResult{stdout: `{"decision":"block","reason":"r"}`}, func(o Outcome) bool { return o.Block && o.Reason == "r" }},
		{"post feedback", PostToolUse, hookResult{code: 2, stderr: "lint failed"}, func(o Outcome) bool { return !o.Block && o.Feedback == "lint failed" }},
		{"prompt stdout is context", UserPromptSubmit, hookResult{stdout: "ctx"}, func(o Outcome) bool { return o.Context == "ctx" }},
		{"tool stdout is not", PreToolUse, hookResult{stdout: "ctx"}, func(o Outcome) bool { return o.Context == "" }},
		{"stop block", Stop, hookResult{stdout: `{"decision":"block","reason":"go on"}`}, func(o Outcome) bool { return o.Block && o.Reason == "go on" }},
		{"continue false", PostToolUse, hookResult{stdout: `{"continue":false,"stopReason":"s"}`}, func(o Outcome) bool { return o.Stop && o.StopReason == "s" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if o := interpret(c.event, k, c.r); !c.check(o) {
				t.Errorf("%+v", o)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		m, tool string
		want    bool
	}{
		{"Bash", "bash", true}, {"Write|Edit", "edit_file", true}, {"Write|Edit", "bash", false},
		{"", "grep", true}, {"*", "grep", true}, {"mcp__.*", "mcp__gh__issue", true}, {"Bas", "bash", false},
	} {
		if got := matches(c.m, Event{Name: PreToolUse, Tool: c.tool}); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.m, c.tool, got)
		}
	}
}

// TestRegistry: sources in the order they registered, the first of a name
// kept, reserved names never offered; Start expands the entry's turn and
// leaves other lines alone; a namespaced Claude Code command answers to
// its plain name too.
func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write(".agents/commands/review.md", "---\ndescription: Review it\nargument-hint: [pr]\nallowed-tools: Bash(git diff:*), Read\nmodel: claude-haiku-4-5\n---\nReview $1\n")
	write(".claude/commands/front/component.md", "Make $ARGUMENTS\n")
	cmds, warns := DiscoverCommands(dir, "", nil, nil)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	r := NewRegistry("/help")
	r.Register(CommandSource(cmds))
	r.Register(func() []Entry {
		return []Entry{{Name: "review", Kind: "skill"}, {Name: "help", Kind: "skill"}, {Name: "deploy", Kind: "skill",
			Expand: func(_ context.Context, a string) (Turn, error) { return Turn{Prompt: "deploy " + a}, nil }}}
	})
	var names []string
	for _, e := range r.Entries() {
		names = append(names, e.Name+"="+e.Kind)
	}
	if got := strings.Join(names, " "); got != "front:component=project command review=project command component=project command deploy=skill" {
		t.Errorf("entries: %s", got)
	}
	tu, e, ok, err := r.Start(context.Background(), "/review 42")
	if !ok || err != nil || tu.Prompt != "Review 42" || e.Args != "[pr]" || tu.Model != "claude-haiku-4-5" || !tu.Trusted || !tu.Project ||
		strings.Join(tu.AllowedTools, ",") != "Bash(git diff:*),Read" {
		t.Errorf("/review: %+v %+v %v %v", tu, e, ok, err)
	}
	if tu, _, ok, _ := r.Start(context.Background(), "/component Button"); !ok || tu.Prompt != "Make Button" || tu.Trusted {
		t.Errorf("/component (a .claude file, which the agent could have written): %+v %v", tu, ok)
	}
	if tu, _, ok, _ := r.Start(context.Background(), "/deploy now"); !ok || tu.Prompt != "deploy now" {
		t.Errorf("/deploy: %+v %v", tu, ok)
	}
	for _, line := range []string{"/help", "/nosuch x", "review 42", "/review-x"} {
		if _, _, ok, _ := r.Start(context.Background(), line); ok {
			t.Errorf("%q started a command", line)
		}
	}
}

// TestClaudeRules reads Claude Code's permission patterns as harness's.
func TestClaudeRules(t *testing.T) {
	rules, skipped := ClaudeRules([]string{"Bash(git add:*)", "Bash(npm run test)", "Bash", "Read", "Grep(src/**)", "Edit", "Write(/docs/**)",
		"Edit(//tmp/x)", "WebFetch(domain:example.com)", "mcp__github", "mcp__fs__read", "Task", "TodoWrite", "WebFetch", "Frobnicate", "Bash(oops"})
	want := []string{"bash git add *", "bash npm run test", "bash *", "read **", "read src/**", "write **", "write docs/**",
		"write /tmp/x", "net example.com", "mcp__github", "mcp__fs__read"}
	if strings.Join(rules, "|") != strings.Join(want, "|") {
		t.Errorf("rules:\n got %q\nwant %q", rules, want)
	}
	if strings.Join(skipped, "|") != "WebFetch|Frobnicate|Bash(oops" {
		t.Errorf("skipped: %q", skipped)
	}
}

// TestGeminiCommandTOML: Gemini CLI's command files parse (multi-line
// strings included), and a malformed one says where.
func TestGeminiCommandTOML(t *testing.T) {
	for _, tc := range []struct {
		in, body, desc, err string
	}{
		{in: "description = \"Fix it\"\nprompt = \"\"\"\nFix {{args}}\n\"\"\"\n", body: "Fix {{args}}\n", desc: "Fix it"},
		{in: "prompt = '''\nraw \\n {{args}}\n'''\n", body: "raw \\n {{args}}\n"},
		{in: "# comment\nprompt = \"one\"\nother = 1\n", body: "one"},
		{in: "prompt = \"unclosed\n", err: "not valid TOML: line 1, column"},
		{in: "prompt = 3\n", err: "not valid TOML: line 1, column 10"},
		{in: "description = \"d\"\n", err: "no prompt"},
		{in: "prompt = \"a\"\nprompt = \"b\"\n", err: "not valid TOML: line 2"},
	} {
		c, err := parseGemini([]byte(tc.in))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case c.Body != tc.body || c.Description != tc.desc:
			t.Errorf("%q: body %q description %q, want %q %q", tc.in, c.Body, c.Description, tc.body, tc.desc)
		}
	}
}

// TestPlanModeStopsProjectHook: an approved project hook that writes the
// project in a loop is running when the session switches to plan mode:
// the switch stops it (its file stops growing on the host) and says so.
func TestPlanModeStopsProjectHook(t *testing.T) {
	testenv.Slow(t)
	proj, home := t.TempDir(), t.TempDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	live := walls.NewLive(pol) // the sandbox and the modes share it, as in a session
	settings := filepath.Join(proj, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	out := filepath.Join(proj, "hook.txt")
	os.WriteFile(settings, []byte(`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","timeout":120,"command":"while :; do echo x >> `+out+`; sleep 0.01; done"}]}]}}`), 0o644)
	h, warns := NewHooks(HookOptions{Project: proj, Files: DefaultSettingsFiles(proj, home, nil), Sandbox: &sandbox.None{L: live},
		AllowProject: true, ApprovalFile: filepath.Join(home, ".agents", "hooks-approved")})
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	modes := NewModes(live, ModeDefault)
	modes.Follow(h.Follow)
	fired := make(chan Outcome, 1)
	go func() { fired <- h.Fire(context.Background(), Event{Name: UserPromptSubmit, Prompt: "p"}) }()
	size := func() int64 {
		st, err := os.Stat(out)
		if err != nil {
			return -1
		}
		return st.Size()
	}
	for deadline := time.Now().Add(10 * time.Second); size() <= 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hook never wrote")
		}
	}
	notes := modes.Set(ModePlan)
	before := size()
	time.Sleep(time.Second)
	if after := size(); after != before {
		t.Errorf("the project hook running at the switch still writes: %d bytes, then %d a second later", before, after)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "hook") {
		t.Errorf("the switch says: %q", notes)
	}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Error("the event did not return after the switch")
	}
	if ctx := modes.TurnContext(); !strings.Contains(ctx, "hook") {
		t.Errorf("the next prompt does not say: %s", ctx)
	}
}
