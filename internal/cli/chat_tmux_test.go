package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestChatTmux drives the interactive session in a real terminal: the
// harness binary runs in a detached tmux session of fixed size against the
// fake provider, keys are sent with send-keys and the screen is read with
// capture-pane. Every wait polls with a generous deadline; nothing asserts
// on time.
//
// With HARNESS_TMUX_CAPTURES=DIR the screens are also saved, with their
// colours, as DIR/*.ansi (docs/ keeps a set).
func TestChatTmux(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := tmuxProject(t)
	tm := startTmux(t, 100, 32, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)

	tm.waitFor("banner", "/help for commands")
	tm.waitPrompt()
	tm.capture("banner")

	// 1. A prompt: the reply streams raw, then is replaced by its rendering.
	enqueue(t, srv, "markdown.jsonl")
	tm.typeLine("explain the plan")
	tm.waitFor("streamed raw text", "**read the code**")
	tm.waitFor("status line", "─ claude-sonnet-4-5")
	screen := tm.screen()
	for _, gone := range []string{"**read the code**", "## Plan", "```"} {
		if strings.Contains(screen, gone) {
			t.Errorf("raw Markdown %q left after rendering:\n%s", gone, screen)
		}
	}
	for _, want := range []string{"I will read the code first", "│ func main() {", "• run the tests", "sandbox "} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	tm.capture("markdown")

	// 2. A command that needs approval: approve it once, it runs.
	enqueue(t, srv, "approve.jsonl")
	tm.typeLine("make a file")
	tm.waitFor("permission prompt", "╰ allow?")
	if s := tm.screen(); !strings.Contains(s, "touch made-by-harness") || !strings.Contains(s, "rule: ") {
		t.Errorf("the prompt does not show the command and the rule:\n%s", s)
	}
	tm.capture("permission")
	tm.answer("y")
	tm.waitFor("tool result", "↳ exit 0")
	tm.waitFor("final text", "Created made-by-harness.")
	if _, err := os.Stat(filepath.Join(proj, "made-by-harness")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}

	// 2b. "Always": the narrowest pattern goes to the project's rules, and
	// the same command then runs without a prompt.
	enqueue(t, srv, "always.jsonl")
	tm.typeLine("make another")
	tm.waitForCount("prompt for always", "╰ allow?", 2)
	if s := tm.screen(); !strings.Contains(s, "yes, always: touch always-made") {
		t.Errorf("the prompt does not offer the narrowest pattern:\n%s", s)
	}
	tm.answer("a")
	tm.waitFor("saved rule", "saved: allow touch always-made")
	tm.waitFor("final text after always", "Made it twice.")
	if n := strings.Count(tm.screen(), "╰ allow?"); n != 2 {
		t.Errorf("%d permission prompts, want 2: the remembered command asked again", n)
	}
	rules, _ := os.ReadFile(filepath.Join(proj, ".agents", "permissions"))
	if !strings.Contains(string(rules), "allow bash touch always-made\n") {
		t.Errorf("the project rules file lacks the saved pattern:\n%s", rules)
	}

	// 3. A long command interrupted with Ctrl-C; the session goes on.
	enqueue(t, srv, "interrupt.jsonl")
	tm.typeLine("wait for it")
	tm.waitFor("third permission prompt", "sleep 120 && echo never")
	tm.waitForCount("prompt for sleep", "╰ allow?", 3)
	tm.answer("y")
	tm.waitFor("spinner while the command runs", "running")
	tm.keys("C-c")
	tm.waitFor("interrupt notice", "⏹ interrupted")
	tm.waitForCount("prompt after the interrupt", "─ claude-sonnet-4-5", 3)
	tm.capture("interrupt")
	enqueue(t, srv, "after.jsonl")
	tm.typeLine("are you there?")
	tm.waitFor("turn after the interrupt", "Still here after the interrupt")

	// 4. /context, /compact, /cost.
	tm.typeLine("/context")
	tm.waitFor("/context view", "tool output")
	tm.capture("context")
	enqueue(t, srv, "compact.jsonl")
	tm.typeLine("/compact the demo")
	tm.waitFor("compaction notice", "compacted the conversation")
	// The sizes make sense: the summary is smaller than what it replaced.
	if m := regexp.MustCompile(`compacted the conversation: about (\d+) → (\d+) tokens`).FindStringSubmatch(words(tm.screen())); m == nil {
		t.Errorf("the compaction notice gives no sizes:\n%s", tm.screen())
	} else if before, _ := strconv.Atoi(m[1]); func() bool { after, _ := strconv.Atoi(m[2]); return after >= before }() {
		t.Errorf("compaction grew the conversation: %s", m[0])
	}
	tm.typeLine("/cost")
	tm.waitFor("/cost view", "cache read")
	tm.capture("commands")

	// The compaction request carried the focus.
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if b, _ := json.Marshal(last.Messages); !bytes.Contains(b, []byte("the demo")) {
		t.Errorf("the /compact focus did not reach the model")
	}

	// 5. Ctrl-C at an empty prompt warns, a second one quits.
	tm.waitPrompt()
	tm.keys("C-c")
	tm.waitFor("quit hint", "Ctrl-C again to quit")
	tm.waitPrompt()
	tm.keys("C-c")
	tm.waitExit()
}

// tmuxHarness skips unless tmux can run the terminal tests, then builds
// the harness binary they drive.
// tmuxParallel: the terminal tests marked t.Parallel share nothing but
// the harness binary (built once, see builtHarness): each has its own
// tmux server on a private socket, home, project and fake provider, and
// gives harness its environment explicitly (env -i), so none sets this
// process's. They mostly wait on a screen, so two run at a time once the
// sequential tests are done. Not marked: TestChatTmuxNotify, whose quick
// turn must stay under a 2 s threshold, and TestChatTmuxMCP, which gives
// a request 500 ms to reach its server before the Esc.
func tmuxHarness(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.Missing(t, testenv.Tmux, "tmux is not installed: the terminal tests need it (CI installs it; apt install tmux)")
	}
	if testing.Short() {
		t.Skip("builds the harness binary and runs it in tmux; skipped with -short")
	}
	return buildHarness(t)
}

// TestChatTmuxEditor checks the line editor in a real terminal: a
// multi-line prompt with Esc-Enter, history with Up, Ctrl-D to quit.
func TestChatTmuxEditor(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	tm := startTmux(t, 60, 20, proj, tmuxEnv(home, srv.URL, "openai", "gpt-4.1-mini"), bin, "--project", proj)
	tm.waitPrompt()

	srv.Enqueue(llmtest.Reply{Text: "got two lines"}, llmtest.Reply{Text: "got it again"})
	tm.waitPrompt()
	tm.keys("-l", "first line")
	tm.keys("Escape", "Enter")
	tm.keys("-l", "second line")
	tm.keys("Enter")
	tm.waitFor("reply", "got two lines")
	if got := srv.Requests()[0].Messages[0].PlainText(); got != "first line\nsecond line" {
		t.Errorf("multi-line prompt arrived as %q", got)
	}
	tm.keys("Up")
	tm.waitForCount("recalled entry", "second line", 2)
	tm.keys("Enter")
	tm.waitFor("second reply", "got it again")
	if got := srv.Requests()[1].Messages; len(got) < 3 || got[2].PlainText() != "first line\nsecond line" {
		t.Errorf("history recall did not resend the multi-line prompt")
	}
	data, err := os.ReadFile(filepath.Join(home, ".agents", "history"))
	if err != nil || !strings.Contains(string(data), `first line\nsecond line`) {
		t.Errorf("history file: %q, %v", data, err)
	}
	// Keys typed while a reply streams are not echoed into it; they wait,
	// editable, at the next prompt.
	srv.Enqueue(llmtest.Reply{Text: "a slow reply that streams for a while, piece by piece, to the end", Delay: 40 * time.Millisecond})
	tm.typeLine("slow please")
	tm.waitFor("streaming", "a slow reply")
	tm.keys("-l", "typed ahead")
	// The turn's status line marks its end (the reply's last words may
	// wrap at this width wherever the break falls).
	tm.waitForCount("end of the slow reply", "─ gpt-4.1-mini", 3)
	tm.waitFor("typed-ahead text at the prompt", "› typed ahead")
	if n := strings.Count(tm.screen(), "typed ahead"); n != 1 {
		t.Errorf("typed-ahead text shown %d times, want once (at the prompt):\n%s", n, tm.screen())
	}
	tm.keys("C-u")
	tm.waitPrompt()

	// Keys typed while the model is still thinking are echoed after the
	// spinner, and wait at the prompt after an interrupt.
	srv.Enqueue(llmtest.Reply{Text: "never shown", Delay: time.Minute}, llmtest.Reply{Text: "two ways"}, llmtest.Reply{Text: "pasted ok"})
	tm.typeLine("think long")
	tm.waitFor("spinner", "thinking")
	tm.keys("-l", "next one")
	tm.waitFor("queued text echoed", "queued: next one")
	tm.capture("queued")
	tm.keys("Escape")
	tm.waitFor("interrupted", "⏹ interrupted")
	tm.waitFor("queued text at the prompt", "› next one")
	tm.keys("C-u")

	// Ctrl-J and \ then Enter insert a newline; Enter alone sends.
	tm.waitPrompt()
	tm.keys("-l", "one")
	tm.keys("C-j")
	tm.keys("-l", "two\\")
	tm.keys("Enter")
	tm.keys("-l", "three")
	tm.keys("Enter")
	tm.waitFor("reply to three lines", "two ways")
	if got := lastUser(srv); got != "one\ntwo\nthree" {
		t.Errorf("Ctrl-J and \\-Enter: the prompt arrived as %q", got)
	}

	// A 60-line paste (bracketed, as terminals send it) is one row on
	// screen, in the scrollback once, and whole in the request.
	var paste strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&paste, "pasted row %d\n", i)
	}
	tm.waitPrompt()
	tm.run("set-buffer", "-b", "p", paste.String())
	tm.run("paste-buffer", "-p", "-d", "-b", "p", "-t", tm.name)
	tm.waitFor("collapsed paste", "[pasted 60 lines]")
	tm.capture("paste")
	tm.keys("Enter")
	tm.waitFor("reply to the paste", "pasted ok")
	if s := tm.screen(); strings.Contains(s, "pasted row 2") || strings.Count(s, "[pasted 60 lines]") != 1 {
		t.Errorf("the paste is shown expanded or twice:\n%s", s)
	}
	if got := lastUser(srv); !strings.Contains(got, "pasted row 1\n") || !strings.Contains(got, "pasted row 60") {
		t.Errorf("the paste did not reach the model whole: %q", got)
	}
	tm.keys("C-d")
	tm.waitExit()
}

// lastUser is the text of the last user message the fake provider got.
func lastUser(srv *llmtest.Server) string {
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].PlainText()
		}
	}
	return ""
}

// tmuxEnv is the environment of a harness under test in tmux: a private
// home, the fake provider at url, a fake key, a known window.
func tmuxEnv(home, url, provider, model string) []string {
	return []string{
		"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "BASE_URL=" + url,
		"PROVIDER=" + provider, "MODEL=" + model, "API_KEY=sk-fake-key-for-tests-0123456789",
		"CONTEXT_WINDOW=200000", "TERM=xterm-256color",
	}
}

// tmuxProject returns a private home and a project that is a git
// repository (what the sandbox and the status line show for one).
func tmuxProject(t *testing.T) (home, proj string) {
	t.Helper()
	home, proj = t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return home, proj
}

// buildHarness returns the harness binary, built once per package run
// (shared with the crash tests: see builtHarness).
func buildHarness(t *testing.T) string {
	t.Helper()
	return builtHarness(t)
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

func enqueue(t *testing.T, srv *llmtest.Server, name string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "tmux", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r llmtest.Reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		srv.Enqueue(r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// tmuxSession is one detached tmux server and session, private to a test.
type tmuxSession struct {
	t    *testing.T
	sock string
	name string
}

const tmuxDeadline = 30 * time.Second

func startTmux(t *testing.T, w, h int, dir string, env []string, argv ...string) *tmuxSession {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "htmux")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	tm := &tmuxSession{t: t, sock: filepath.Join(sockDir, "s"), name: "h"}
	cmdline := append([]string{"env", "-i", "PATH=" + os.Getenv("PATH")}, env...)
	// The shell reports the exit status. Its trap keeps it alive through
	// the Ctrl-C the test sends during a turn (a shell waiting for a child
	// would otherwise die of that SIGINT once the child exits); a trap,
	// unlike an ignore, is reset for the child.
	cmdline = append(cmdline, "sh", "-c", `trap : INT; "$@"; echo "[harness exited with status $?]"`, "sh")
	cmdline = append(cmdline, argv...)
	args := []string{"new-session", "-d", "-s", tm.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir}
	args = append(args, cmdline...)
	args = append(args, ";", "set-option", "-t", tm.name, "remain-on-exit", "on")
	tm.run(args...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen at failure:\n%s", tm.screen())
		}
		exec.Command("tmux", "-S", tm.sock, "kill-server").Run()
	})
	return tm
}

func (tm *tmuxSession) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen returns the pane's text, scrollback included.
func (tm *tmuxSession) screen() string {
	out, err := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-J", "-S", "-1000", "-t", tm.name).Output()
	if err != nil {
		return fmt.Sprintf("(capture failed: %v)", err)
	}
	return string(out)
}

func (tm *tmuxSession) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", tm.name}, keys...)...)
}

// typeLine waits for an empty prompt, as a person would, then types s and
// Enter.
func (tm *tmuxSession) typeLine(s string) {
	tm.t.Helper()
	tm.waitPrompt()
	tm.keys("-l", s)
	tm.keys("Enter")
}

func (tm *tmuxSession) waitFor(what, text string) {
	tm.t.Helper()
	tm.waitForCount(what, text, 1)
}

// waitForCount polls until text appears at least n times on the screen.
func (tm *tmuxSession) waitForCount(what, text string, n int) {
	tm.t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		if strings.Count(tm.screen(), text) >= n {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	tm.t.Fatalf("waiting for %s: %q (×%d) never appeared on screen:\n%s", what, text, n, tm.screen())
}

// answer presses key at a list of answers (a permission prompt), once the
// list is on screen (it is drawn once the terminal is raw, and cleared
// when answered, so at most one is ever shown).
func (tm *tmuxSession) answer(key string) {
	tm.t.Helper()
	tm.waitFor("the list of answers", "↑↓ Enter picks")
	tm.keys("-l", key)
}

// refuse answers a permission prompt with a reason for the model.
func (tm *tmuxSession) refuse(reason string) {
	tm.t.Helper()
	tm.answer("r")
	tm.waitFor("the reason line", "tell the model why:")
	tm.keys("-l", reason)
	tm.keys("Enter")
}

// waitPrompt waits until the last line on screen is the empty prompt: the
// editor draws it after switching the terminal to raw mode, so keys sent
// from then on reach the editor rather than the terminal driver.
func (tm *tmuxSession) waitPrompt() {
	tm.t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		lines := strings.Split(strings.TrimRight(tm.screen(), "\n "), "\n")
		if strings.TrimSpace(lines[len(lines)-1]) == "›" {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	tm.t.Fatalf("the prompt never came back:\n%s", tm.screen())
}

// waitExit waits for the harness process to end and checks its exit
// status, which the wrapping shell prints (tmux's own pane_dead_status can
// be read before it is set).
func (tm *tmuxSession) waitExit() {
	tm.t.Helper()
	tm.waitFor("the harness to exit", "[harness exited with status ")
	if s := tm.screen(); !strings.Contains(s, "[harness exited with status 0]") {
		tm.t.Errorf("harness did not exit with status 0:\n%s", s)
	}
}

// capture saves the screen with its colours to $HARNESS_TMUX_CAPTURES/name.ansi.
func (tm *tmuxSession) capture(name string) {
	dir := os.Getenv("HARNESS_TMUX_CAPTURES")
	if dir == "" {
		return
	}
	out, err := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-e", "-p", "-t", tm.name).Output()
	if err != nil {
		tm.t.Errorf("capture %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".ansi"), out, 0o644); err != nil {
		tm.t.Error(err)
	}
}
