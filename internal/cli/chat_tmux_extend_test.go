package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// waitPromptText waits until the last line on screen is the prompt p
// ("›", "plan ›", "accept edits ›") with nothing typed after it.
func (tm *tmuxSession) waitPromptText(p string) {
	tm.t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		lines := strings.Split(strings.TrimRight(tm.screen(), "\n "), "\n")
		if strings.TrimSpace(lines[len(lines)-1]) == p {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	tm.t.Fatalf("the prompt %q never came:\n%s", p, tm.screen())
}

// pick moves the highlight of a one-key list with the arrows and picks
// with Enter, at a person's pace (an Enter at once after the list is
// drawn is ignored).
func (tm *tmuxSession) pickWith(keys ...string) {
	tm.t.Helper()
	tm.waitFor("the list of answers", "↑↓ Enter picks")
	for _, k := range keys {
		tm.keys(k)
	}
	time.Sleep(600 * time.Millisecond)
	tm.keys("Enter")
}

// TestChatTmuxPlanMode drives the permission modes in a terminal, at
// 80×24 and 120×40: Shift+Tab cycles default → acceptEdits → plan →
// default, the prompt naming the mode; a plan-mode turn cannot write (the
// write_file is refused by the read-only walls) and ends in a plan
// offered on the one-key list, "yes" highlighted; Down then Enter picks
// "allow file edits", which leaves plan mode for acceptEdits and starts
// at once the turn that carries the plan out, editing without a prompt.
func TestChatTmuxPlanMode(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	for _, size := range firstHourSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			planMode(t, bin, size.w, size.h)
		})
	}
}

func planMode(t *testing.T, bin string, w, h int) {
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("alpha\nbeta\n"), 0o644)
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, w) }
	tm := startTmux(t, w, h, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)

	tm.waitPrompt()
	tm.keys("BTab")
	tm.waitPromptText("accept edits ›")
	tm.keys("BTab")
	tm.waitPromptText("plan ›")
	tm.captureText(name("mode-plan"))

	plan := "PLAN: 1. rename alpha to ALPHA in notes.txt 2. check the file"
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: `{"path":"notes.txt"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: `{"path":"sneaky.txt","content":"x"}`}}},
		llmtest.Reply{Text: plan},
	)
	tm.keys("-l", "plan the rename")
	tm.keys("Enter")
	tm.waitFor("the plan offered", "accept this plan?")
	tm.waitFor("the default highlighted", "❯ y  yes, carry it out")
	tm.waitForWords("what Esc does here", "Esc: keep planning")
	tm.captureText(name("plan-accept"))
	if _, err := os.Stat(filepath.Join(proj, "sneaky.txt")); err == nil {
		t.Error("a plan-mode turn wrote a file")
	}
	if n := strings.Count(tm.screen(), "╰ allow?"); n != 0 {
		t.Errorf("%d permission prompts in plan mode: the write should be refused by the walls, not asked about", n)
	}
	if got := srv.Requests()[0].Messages[0].PlainText(); !strings.Contains(got, "[harness: plan mode]") {
		t.Errorf("the planning turn was not told it plans: %q", got)
	}
	// Accepting starts the work at once, as in Claude Code: no "go" to type.
	edit, _ := json.Marshal(map[string]string{"path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA"})
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Input: string(edit)}}},
		llmtest.Reply{Text: "Renamed."},
	)
	tm.pickWith("Down")
	tm.waitForWords("the plan accepted", "plan accepted: acceptEdits mode; carrying it out")
	tm.waitFor("the plan carried out", "Renamed.")
	tm.waitPromptText("accept edits ›")
	// Requests 0–2 were the plan's; 3 is the turn acceptance started.
	msgs := srv.Requests()[3].Messages
	if got := msgs[len(msgs)-1].PlainText(); !strings.Contains(got, "accepted your plan") || !strings.Contains(got, plan) || !strings.Contains(got, planGo) {
		t.Errorf("the turn acceptance started does not carry the plan: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "notes.txt")); string(b) != "ALPHA\nbeta\n" {
		t.Errorf("the edit was not made: %q", b)
	}
	if n := strings.Count(tm.screen(), "╰ allow?"); n != 0 {
		t.Errorf("%d permission prompts for an edit in acceptEdits mode, want 0", n)
	}
	tm.waitPromptText("accept edits ›")
	tm.keys("BTab")
	tm.waitPromptText("plan ›")
	tm.keys("BTab")
	tm.waitPrompt()

	// "no, keep planning" (n, one key) stays in plan mode.
	tm.keys("BTab")
	tm.keys("BTab")
	tm.waitPromptText("plan ›")
	srv.Enqueue(llmtest.Reply{Text: "PLAN: another"})
	tm.keys("-l", "another plan")
	tm.keys("Enter")
	tm.answer("n")
	tm.waitFor("still planning", "still in plan mode: say what to change")
	tm.waitPromptText("plan ›")
	tm.keys("C-d")
	tm.waitExit()
	checkFits(t, tm.screen(), w)
}

// TestChatTmuxExtensions drives custom commands, skills and hooks in a
// terminal, at 80×24 and 120×40: /help lists each with where it came
// from; the / menu offers custom commands and skills beside the
// built-ins; "/review 42 high" typed expands the command's file; a
// project command's allowed-tools ask first (one key, "no" highlighted)
// and then let its command run without a prompt; a project hook asks
// before it first runs and then runs inside the walls, and once the
// agent rewrites it asks again; a Notification hook hears of a permission
// prompt; the user's UserPromptSubmit, PreToolUse (exit 2) and
// PostToolUse hooks add context, block with their stderr to the model,
// and see each call's JSON.
func TestChatTmuxExtensions(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, "project hooks and allowed-tools need the sandbox (bwrap): "+why)
	}
	for _, size := range firstHourSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			extensions(t, bin, size.w, size.h)
		})
	}
}

func extensions(t *testing.T, bin string, w, h int) {
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, w) }
	files := map[string]string{
		".agents/commands/review.md":      "---\ndescription: Review a pull request\nargument-hint: [pr] [priority]\n---\nReview PR #$1 with priority $2.\n",
		".claude/commands/git/commit.md":  "---\ndescription: Commit the work\nallowed-tools: Bash(touch:*)\n---\nCommit what changed.\n",
		".gemini/commands/fix.toml":       "description = \"Fix an issue\"\nprompt = \"Fix this: {{args}}\"\n",
		".agents/skills/release/SKILL.md": "---\nname: release\ndescription: How to cut a release of this project.\n---\nTag it.\n",
		".claude/settings.json":           `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo project-hook-ran >> hook.log"}]}]}}`,
	}
	for rel, body := range files {
		p := filepath.Join(proj, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The user's hooks (read once, at the start): a Notification hook; a
	// UserPromptSubmit hook adds context, a PreToolUse hook that exits 2
	// blocks a bash call and the model reads its stderr, a PostToolUse
	// hook sees each call's JSON.
	notifyLog := filepath.Join(t.TempDir(), "notify.log")
	postLog := filepath.Join(t.TempDir(), "post.log")
	os.MkdirAll(filepath.Join(home, ".agents"), 0o755)
	os.WriteFile(filepath.Join(home, ".agents", "settings.json"), []byte(`{"hooks": {
		"Notification": [{"hooks": [{"type": "command", "command": "cat >> `+notifyLog+`"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo HOOK-CONTEXT-FOR-THE-MODEL"}]}],
		"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "if grep -q 'touch blocked'; then echo 'no touching here' >&2; exit 2; fi"}]}],
		"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat >> `+postLog+`; echo >> `+postLog+`"}]}]}}`), 0o644)

	tm := startTmux(t, w, h, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.waitPrompt()

	// /help: the commands, skills and hooks in force, and where each came from.
	tm.typeLine("/help")
	tm.waitForWords("/help's custom commands", "/commit Commit the work (/git:commit)")
	s := words(tm.screen())
	for _, want := range []string{
		"/review [pr] [priority] Review a pull request (.agents/commands/review.md)",
		"/fix Fix an issue (.gemini/commands/fix.toml)",
		"/git:commit Commit the work (.claude/commands/git/commit.md)",
		"skills", "/release [task] How to cut a release of this project. (.agents/skills/release/SKILL.md)",
		"project commands /fix Fix an issue", "hooks", "Notification * cat >> " + notifyLog + " (user: ~/.agents/settings.json)",
		"PostToolUse Bash echo project-hook-ran >> hook.log [not approved yet: asks before it first runs] (project: .claude/settings.json)",
		"permission mode: default",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("/help lacks %q:\n%s", want, tm.screen())
		}
	}
	tm.captureText(name("help-extensions"))

	// The / menu: custom commands and skills beside the built-ins.
	tm.waitPrompt()
	tm.keys("-l", "/rev")
	tm.waitFor("a custom command in the menu", "❯ /review")
	tm.waitForWords("its description and kind", "Review a pull request (project command)")
	tm.captureText(name("slash-menu-commands"))
	tm.keys("C-u")
	tm.keys("-l", "/")
	tm.waitFor("the menu on /", "more (type to narrow)")
	tm.keys("-l", "fi")
	tm.waitFor("a Gemini command in the menu", "❯ /fix")
	tm.keys("C-u")
	tm.waitPrompt()

	// A custom command typed with arguments.
	srv.Enqueue(llmtest.Reply{Text: "Reviewed."})
	tm.typeLine("/review 42 high")
	tm.waitFor("the reply", "Reviewed.")
	if got := lastUser(srv); !strings.Contains(got, "Review PR #42 with priority high.") {
		t.Errorf("the command did not expand: %q", got)
	}
	tm.waitForWords("where it came from", "/review (project command: .agents/commands/review.md)")

	// A project .claude command's allowed-tools ask first, "no"
	// highlighted; yes lets its command run without a prompt. The
	// project hook asks before its first run ("no" highlighted) and then
	// runs inside the walls.
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch committed-file"}`}}},
		llmtest.Reply{Text: "Committed."},
	)
	tm.typeLine("/commit")
	tm.waitForWords("the allowed-tools question", "asks to use, without asking, for its turn: bash touch *")
	tm.waitFor("no highlighted", "❯ n  no: its calls ask as usual")
	tm.captureText(name("allowed-tools"))
	tm.answer("y")
	tm.waitFor("the hook question", "a project hook wants to run")
	tm.waitFor("no highlighted", "❯ n  no, not this session")
	tm.captureText(name("hook-approval"))
	tm.answer("y")
	tm.waitFor("the reply", "Committed.")
	if _, err := os.Stat(filepath.Join(proj, "committed-file")); err != nil {
		t.Errorf("the command allowed-tools named did not run: %v", err)
	}
	if n := strings.Count(tm.screen(), "╰ allow?"); n != 0 {
		t.Errorf("%d permission prompts for a command the allowed-tools named", n)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "hook.log")); string(b) != "project-hook-ran\n" {
		t.Errorf("the approved project hook: hook.log %q", b)
	}

	// After the command's turn its allowed-tools are gone: the same
	// command asks, and the Notification hook hears of the prompt.
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch again-file"}`}}},
		llmtest.Reply{Text: "Asked."},
	)
	tm.typeLine("touch it again")
	tm.waitFor("a permission prompt", "╰ allow?")
	tm.answer("n")
	tm.waitFor("the reply", "Asked.")
	if _, err := os.Stat(filepath.Join(proj, "again-file")); err == nil {
		t.Error("allowed-tools outlived the command's turn")
	}
	if b, _ := os.ReadFile(notifyLog); !strings.Contains(string(b), `"notification_type":"permission_prompt"`) {
		t.Errorf("the Notification hook did not hear of the prompt: %q", b)
	}

	// The user's hooks at work.
	before := len(srv.Requests())
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch blocked-file"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo seen-by-post"}`}}},
		llmtest.Reply{Text: "Hooked."},
	)
	tm.typeLine("hooks please")
	tm.waitFor("the reply", "Hooked.")
	reqs := srv.Requests()[before:]
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Body), "HOOK-CONTEXT-FOR-THE-MODEL") {
		t.Error("the UserPromptSubmit hook's context did not reach the model")
	}
	if !strings.Contains(string(reqs[1].Body), "a PreToolUse hook blocked this call: no touching here") {
		t.Errorf("the model did not get the PreToolUse hook's stderr: %s", reqs[1].Body)
	}
	if _, err := os.Stat(filepath.Join(proj, "blocked-file")); err == nil {
		t.Error("the blocked command ran")
	}
	if b, _ := os.ReadFile(postLog); !strings.Contains(string(b), `"tool_input":{"command":"echo seen-by-post"}`) ||
		!strings.Contains(string(b), `"hook_event_name":"PostToolUse"`) || strings.Contains(string(b), "touch blocked") {
		t.Errorf("the PostToolUse hook's log: %s", b)
	}

	// The agent rewrites the approved project hook: the settings are read
	// once, so the new definition is neither asked about nor run this
	// session; the approved one goes on.
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: `{"path":".claude/settings.json","content":"{\"hooks\":{\"PostToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"echo v2-ran >> hook.log\"}]}]}}"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo after-change"}`}}},
		llmtest.Reply{Text: "Changed."},
	)
	tm.typeLine("change the hook")
	tm.waitForCount("the write's prompt", "╰ allow?", 2)
	tm.answer("y")
	tm.waitFor("the reply", "Changed.")
	if n := strings.Count(tm.screen(), "a project hook wants to run"); n > 1 {
		t.Errorf("the changed definition was read mid-session and asked about (%d questions)", n)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "hook.log")); strings.Contains(string(b), "v2-ran") {
		t.Errorf("the changed hook ran: %q", b)
	}
	tm.typeLine("/exit")
	tm.waitExit()
	checkFits(t, tm.screen(), w)
}

// screensCommands are the slash commands whose screens
// TestChatTmuxScreenWords compares across widths.
var screensCommands = []string{"/help", "/sandbox", "/permissions", "/network", "/todos", "/ps", "/model", "/context"}

// TestChatTmuxScreenWords renders each screen of the slash commands in
// the same project at 120×40 and at 80×24 and checks that no word is
// broken: the words on screen, in order, are the same at both widths
// (a word cut in two by harness's wrapping, or cut short, would differ),
// and no line was wrapped by the terminal.
func TestChatTmuxScreenWords(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	os.MkdirAll(filepath.Join(proj, ".agents", "commands"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agents", "commands", "review.md"),
		[]byte("---\ndescription: Review a pull request and say what would break for callers of the changed functions\nargument-hint: [pr] [priority]\n---\nReview $1\n"), 0o644)
	got := map[int]map[string]string{}
	for _, size := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		tm := startTmux(t, size.w, size.h, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
		tm.waitPrompt()
		got[size.w] = map[string]string{}
		for _, cmd := range screensCommands {
			tm.waitPrompt()
			tm.keys("-l", cmd)
			tm.waitFor("the / menu", "❯ "+cmd)
			tm.keys("Escape") // the / menu would take Enter
			// Esc then Enter at once would be Alt-Enter (a new line).
			waitRows(t, tm, func(rows []string) bool { return !strings.Contains(strings.Join(rows, "\n"), "❯ "+cmd) })
			tm.keys("Enter")
			tm.waitForCount("the prompt after "+cmd, "\n›", 2)
			tm.waitPrompt()
			got[size.w][cmd] = screenOf(tm.screen(), cmd)
			tm.captureText(fmt.Sprintf("screen-%s-%d", strings.TrimPrefix(cmd, "/"), size.w))
		}
		tm.keys("C-d")
		tm.waitExit()
		checkFits(t, tm.screen(), size.w)
	}
	for _, cmd := range screensCommands {
		wide, narrow := got[120][cmd], got[80][cmd]
		if wide == "" {
			t.Errorf("%s: nothing on screen", cmd)
			continue
		}
		if wide != narrow {
			w, n := strings.Fields(wide), strings.Fields(narrow)
			i := 0
			for i < len(w) && i < len(n) && w[i] == n[i] {
				i++
			}
			t.Errorf("%s: the words at 80 columns differ from those at 120, from word %d:\n 120: %s\n  80: %s",
				cmd, i, strings.Join(w[i:min(len(w), i+8)], " "), strings.Join(n[i:min(len(n), i+8)], " "))
		}
	}
}

// screenOf is the words a command printed: the lines after "› CMD" up to
// the next prompt.
func screenOf(screen, cmd string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "› "+cmd {
			continue
		}
		var out []string
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(strings.TrimSpace(l), "›") {
				break
			}
			out = append(out, l)
		}
		return words(strings.Join(out, "\n"))
	}
	return ""
}
