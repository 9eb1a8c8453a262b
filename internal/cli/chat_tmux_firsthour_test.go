package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/ui"
)

// firstHourSizes are the terminals a first hour is tried in.
var firstHourSizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// TestChatTmuxFirstHour goes through what a developer meets in a first
// hour, at 80×24 and at 120×40: the banner, /help, an @ mention of a file
// that is not there, one-key answers (all edits this session; arrows and
// Enter), /sessions without the run whose first request failed, a base
// URL that answers a web page, /cost, /compact of a tiny chat, and the
// resume hint at /exit. Every line harness printed must fit the width:
// the pane is captured with wrapped rows joined (-J), so a row the
// terminal had to wrap, cutting a word, shows as a line wider than the
// pane.
func TestChatTmuxFirstHour(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	for _, size := range firstHourSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			firstHour(t, bin, size.w, size.h)
		})
	}
}

func firstHour(t *testing.T, bin string, w, h int) {
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	env := tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5")
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644)
	os.MkdirAll(filepath.Join(proj, ".agents", "skills", "release"), 0o755)
	os.WriteFile(filepath.Join(proj, ".agents", "skills", "release", "SKILL.md"), []byte("---\nname: release\ndescription: How to cut a release of this project.\n---\nTag it.\n"), 0o644)
	name := func(s string) string { return fmt.Sprintf("%s-%d", s, w) }

	// Earlier, headless: a session with a long title, and one whose first
	// request failed.
	srv.Enqueue(llmtest.Reply{Text: "Looked."})
	headless(t, bin, proj, env, "please look at the parser for nested quotes in the configuration loader and tell me what breaks when a value spans several lines")
	srv.Enqueue(llmtest.Reply{Status: 401})
	if err := headless(t, bin, proj, env, "a first request that failed"); err == nil {
		t.Fatal("the run against a 401 succeeded")
	}

	tm := startTmux(t, w, h, proj, env, bin, "--project", proj)
	tm.waitPrompt()
	if s := tm.screen(); !strings.Contains(s, "git commits work") || strings.Contains(s, ".git read-only") {
		t.Errorf("the banner does not state the git walls as they are:\n%s", s)
	}
	tm.captureText(name("banner"))

	tm.typeLine("/help")
	tm.waitFor("/help", "quit (also Ctrl-D")
	tm.captureText(name("help"))

	// The / menu pops up as a command is typed, narrows fuzzily, moves
	// with the arrows; skills are in it; Esc closes it.
	tm.waitPrompt()
	tm.keys("-l", "/co")
	tm.waitFor("the / menu", "❯ /compact")
	tm.waitFor("a description in the menu", "/cost")
	tm.captureText(name("slash-menu"))
	tm.keys("Down")
	tm.waitFor("the highlight in the menu", "❯ /context")
	tm.keys("Escape")
	waitRows(t, tm, func(rows []string) bool { return !strings.Contains(strings.Join(rows, "\n"), "❯ /context") })
	tm.keys("C-u")
	tm.keys("-l", "/rel")
	tm.waitFor("a skill in the menu", "❯ /release")
	tm.waitForWords("the skill's description", "How to cut a release")
	tm.keys("C-u")
	// The @ picker: files of the project, fuzzy; Tab takes one.
	tm.keys("-l", "look at @nts")
	tm.waitFor("the @ picker", "❯ @notes.txt")
	tm.captureText(name("at-picker"))
	tm.keys("Tab")
	tm.waitFor("the file taken", "› look at @notes.txt")
	tm.keys("C-u")
	tm.waitPrompt()

	// An @ mention of a file that is not there is said.
	srv.Enqueue(llmtest.Reply{Text: "Read it."})
	tm.typeLine("explain @missing.go and @notes.txt please")
	tm.waitForWords("the missing-file note", "@missing.go: no such file in the project: not attached")
	tm.waitFor("reply", "Read it.")
	if got := lastUser(srv); !strings.Contains(got, "<file path=\"notes.txt\">") {
		t.Errorf("the file that exists was not attached: %q", got)
	}
	// /compact of a chat this small declines, saying why.
	tm.typeLine("/compact")
	tm.waitForWords("/compact of a tiny chat", "nothing to compact: the conversation is about")
	tm.captureText(name("compact"))

	// One key: "all edits this session" answers the first edit and the
	// second never asks.
	edit := func(old, new string) string {
		b, _ := json.Marshal(map[string]string{"path": "notes.txt", "old_string": old, "new_string": new})
		return string(b)
	}
	srv.Enqueue(
		llmtest.Reply{Text: "First edit.", ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Input: edit("alpha\n", "ALPHA\n")}}},
		llmtest.Reply{Text: "Second edit.", ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Input: edit("gamma\n", "GAMMA\n")}}},
		llmtest.Reply{Text: "Both edits made."},
	)
	tm.typeLine("edit twice")
	tm.waitFor("edit prompt", "yes, and allow all edits this session")
	tm.captureText(name("prompt-edit"))
	tm.answer("e")
	tm.waitFor("end of the edits", "Both edits made.")
	if b, _ := os.ReadFile(filepath.Join(proj, "notes.txt")); string(b) != "ALPHA\nbeta\nGAMMA\n" {
		t.Errorf("the edits were not both made: %q", b)
	}
	if n := strings.Count(tm.screen(), "╰ allow?"); n != 1 {
		t.Errorf("%d prompts for two edits after \"all edits\", want 1", n)
	}

	// Arrows and Enter: the default is highlighted; Down then Up comes
	// back to it and Enter picks it. A command still asks.
	srv.Enqueue(
		llmtest.Reply{Text: "Making it.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch made-by-arrows"}`}}},
		llmtest.Reply{Text: "Made."},
	)
	tm.typeLine("make a file")
	tm.waitFor("the list", "↑↓ Enter picks")
	if s := tm.screen(); !strings.Contains(s, "❯ y  yes, once") {
		t.Errorf("the default is not highlighted:\n%s", s)
	}
	tm.keys("Down")
	tm.waitFor("the highlight moved", "❯ s  yes, for this session")
	tm.keys("Up")
	tm.waitFor("the highlight back", "❯ y  yes, once")
	time.Sleep(600 * time.Millisecond) // a person's pace: Enter at once after the list is ignored
	tm.keys("Enter")
	tm.waitFor("after the command", "Made.")
	if _, err := os.Stat(filepath.Join(proj, "made-by-arrows")); err != nil {
		t.Errorf("the command picked with Enter did not run: %v", err)
	}

	// /sessions: the long title cut at a word, the failed start left out.
	tm.typeLine("/sessions")
	tm.waitFor("/sessions", "/resume ID switches")
	if s := tm.screen(); strings.Contains(s, "a first request that failed") || !strings.Contains(words(s), "1 session that never got a reply not listed") {
		t.Errorf("/sessions shows the failed start, or does not say it left it out:\n%s", s)
	}
	tm.captureText(name("sessions"))

	// A base URL answering a web page: one request, the advice at once.
	before := len(srv.Requests())
	srv.Enqueue(llmtest.Reply{Status: 502, ErrorBody: "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"})
	tm.typeLine("hello?")
	tm.waitForWords("the advice", "does not look like the API: check the URL")
	if n := len(srv.Requests()) - before; n != 1 {
		t.Errorf("%d requests for a web page, want 1 (no retries)", n)
	}
	tm.captureText(name("error"))

	tm.typeLine("/cost")
	tm.waitFor("/cost", "cache read")
	tm.captureText(name("cost"))

	tm.typeLine("/exit")
	tm.waitForWords("resume hint", "resume this session with: harness --resume")
	tm.waitExit()
	tm.captureText(name("exit"))
	checkFits(t, tm.screen(), w)
}

// words is s with every run of spaces and newlines made one space: a
// phrase harness wrapped across rows is found whole in it.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// waitForWords waits for a phrase that may be wrapped across rows.
func (tm *tmuxSession) waitForWords(what, phrase string) {
	tm.t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		if strings.Contains(words(tm.screen()), phrase) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	tm.t.Fatalf("waiting for %s: %q never appeared on screen:\n%s", what, phrase, tm.screen())
}

// headless runs harness run PROMPT in proj with env.
func headless(t *testing.T, bin, proj string, env []string, prompt string) error {
	t.Helper()
	cmd := exec.Command(bin, "run", "--project", proj, prompt)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Dir = proj
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("harness run %q: %v\n%s", prompt, err, out)
	}
	return err
}

// checkFits asserts that no line of a capture with wrapped rows joined is
// wider than width: harness wrapped every line itself, at words.
func checkFits(t *testing.T, screen string, width int) {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimRight(l, " "); ui.StringWidth(l) > width {
			t.Errorf("a line the terminal had to wrap (wider than %d):\n%s", width, l)
		}
	}
}

// captureText saves the visible screen as text to
// $HARNESS_TMUX_CAPTURES/name.txt.
func (tm *tmuxSession) captureText(name string) {
	dir := os.Getenv("HARNESS_TMUX_CAPTURES")
	if dir == "" {
		return
	}
	out, err := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-t", tm.name).Output()
	if err != nil {
		tm.t.Errorf("capture %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), out, 0o644); err != nil {
		tm.t.Error(err)
	}
}

// TestChatTmuxNotify: with HARNESS_NOTIFY=osc9 a turn longer than
// HARNESS_NOTIFY_AFTER ends with the bell and an OSC 9 notification, and
// a permission prompt in such a turn notifies that it waits. The bytes
// the terminal got are read through tmux's pipe-pane (capture-pane shows
// no escape sequences).
func TestChatTmuxNotify(t *testing.T) {
	bin := tmuxHarness(t)
	for _, size := range firstHourSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			srv := llmtest.NewServer(t)
			home, proj := tmuxProject(t)
			env := append(tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), "HARNESS_NOTIFY=osc9", "HARNESS_NOTIFY_AFTER=2s")
			tm := startTmux(t, size.w, size.h, proj, env, bin, "--project", proj)
			raw := filepath.Join(t.TempDir(), "raw")
			tm.run("pipe-pane", "-o", "-t", tm.name, "cat >> "+raw)
			tm.waitPrompt()
			srv.Enqueue(llmtest.Reply{Text: "Quick."})
			tm.typeLine("a quick one")
			tm.waitFor("quick reply", "Quick.")
			tm.waitPrompt()
			// The slow turns take seconds (a chunk every 400 ms), the quick
			// one well under the 2 s threshold even on a loaded machine.
			srv.Enqueue(llmtest.Reply{Text: "A slow reply that takes a while to stream in.", Delay: 400 * time.Millisecond},
				llmtest.Reply{Text: "Asking, after a long think about it.", Delay: 400 * time.Millisecond, ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch notify-file"}`}}},
				llmtest.Reply{Text: "Refused, fine."})
			tm.typeLine("a slow one")
			tm.waitFor("slow reply", "to stream in.")
			tm.waitPrompt()
			waitRaw(t, raw, "\x1b]9;harness: the turn is done after ")
			tm.typeLine("ask me")
			tm.answer("n")
			tm.waitFor("after the refusal", "Refused, fine.")
			tm.waitPrompt() // Ctrl-D ends the session at the prompt, not while the turn ends
			tm.keys("C-d")
			tm.waitExit()
			data := waitRaw(t, raw, "\x1b]9;harness: waiting for your answer (permission)\x1b\\\a")
			// The slow turn and the one that asked; the quick one is under
			// the threshold (a third would be its).
			if n := strings.Count(data, "\x1b]9;harness: the turn is done"); n != 2 {
				t.Errorf("%d turn-done notifications, want 2: %q", n, regexp.MustCompile(`\x1b\]9;[^\x1b]*`).FindAllString(data, -1))
			}
		})
	}
}

// waitRaw waits until the file holding the pane's raw output contains
// want, and returns it.
func waitRaw(t *testing.T, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never got %q; it got:\n%q", want, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
