package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// longReply is a 60-line Markdown reply whose paragraphs are longer than
// any terminal row.
func longReply() (src string, sentences []string) {
	var b strings.Builder
	for i := range 12 {
		s := fmt.Sprintf("Part %d of the plan: it has one package, and the **important** detail is that every paragraph here is long enough to wrap at eighty and at one hundred and twenty columns too.", i)
		sentences = append(sentences, strings.ReplaceAll(s, "**", ""))
		fmt.Fprintf(&b, "## Step %d\n\n%s\n\n- first item of step %d\n", i, s, i)
		if i%4 == 3 {
			fmt.Fprintf(&b, "\n| file | state |\n|---|---|\n| main%d.go | fine |\n", i)
		}
		b.WriteString("\n")
	}
	return b.String(), sentences
}

// visible is the pane's visible rows, as the terminal shows them (no
// joining of wrapped rows).
func (tm *tmuxSession) visible() []string {
	out, err := exec.Command("tmux", "-S", tm.sock, "capture-pane", "-p", "-t", tm.name).Output()
	if err != nil {
		tm.t.Fatalf("capture: %v", err)
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// checkWrapped asserts that the visible rows show rendered Markdown, no row
// is wider than width, and the sentences that are on screen are whole when
// rows are joined with spaces: a word cut by the terminal would read "on e".
func checkWrapped(t *testing.T, rows []string, width int, sentences []string) (widest int) {
	t.Helper()
	for _, r := range rows {
		w := len([]rune(strings.TrimRight(r, " ")))
		widest = max(widest, w)
		if w > width {
			t.Errorf("row wider than %d: %q", width, r)
		}
		for _, raw := range []string{"**", "## ", "|---", "- first item"} {
			if strings.Contains(r, raw) {
				t.Errorf("raw Markdown %q on screen: %q", raw, r)
			}
		}
	}
	joined := strings.Join(strings.Fields(strings.Join(rows, " ")), " ")
	whole := 0
	for _, s := range sentences {
		// Only sentences whose start is on screen can be checked whole.
		head := s[:20]
		if !strings.Contains(joined, head) {
			continue
		}
		i := strings.Index(joined, head)
		if len(joined)-i < len(s) {
			continue // cut by the bottom of the screen
		}
		if !strings.Contains(joined, s) {
			t.Errorf("a sentence is not whole on screen (cut mid-word?):\n%s\nscreen:\n%s", s, strings.Join(rows, "\n"))
			continue
		}
		whole++
	}
	if whole == 0 {
		t.Errorf("no sentence of the reply whole on screen:\n%s", strings.Join(rows, "\n"))
	}
	return widest
}

// TestChatTmuxLongReply: a reply taller than the window is rendered and
// word-wrapped at 80 columns, re-wrapped when the window grows to 120 and
// shrinks back, and a reply streamed at 120 is wrapped at 120.
func TestChatTmuxLongReply(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	tm := startTmux(t, 80, 30, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.waitPrompt()
	src, sentences := longReply()
	if n := strings.Count(src, "\n"); n < 60 {
		t.Fatalf("the reply has %d lines, want 60", n)
	}
	srv.Enqueue(llmtest.Reply{Text: src}, llmtest.Reply{Text: src})
	tm.typeLine("the long plan")
	tm.waitFor("status line", "─ claude-sonnet-4-5")
	tm.waitPrompt()
	all := tm.screen()
	for i := range 12 {
		if !strings.Contains(all, fmt.Sprintf("• first item of step %d", i)) {
			t.Errorf("item %d not rendered in the scrollback", i)
		}
	}
	if strings.Contains(all, "**") || strings.Contains(all, "## Step") {
		t.Errorf("raw Markdown left in the scrollback:\n%s", all)
	}
	checkWrapped(t, tm.visible(), 80, sentences)
	tm.capture("long-reply-80")

	tm.run("resize-window", "-t", tm.name, "-x", "120", "-y", "30")
	waitRows(t, tm, func(rows []string) bool { return widest(rows) > 80 && sentencesWhole(rows, sentences) })
	if w := checkWrapped(t, tm.visible(), 120, sentences); w <= 80 {
		t.Errorf("after growing to 120 columns the widest row is %d: not re-wrapped", w)
	}
	tm.capture("long-reply-resized-120")

	tm.typeLine("again at 120")
	tm.waitForCount("second status line", "─ claude-sonnet-4-5", 2)
	tm.waitPrompt()
	if w := checkWrapped(t, tm.visible(), 120, sentences); w <= 80 {
		t.Errorf("a reply at 120 columns is only %d wide", w)
	}

	tm.run("resize-window", "-t", tm.name, "-x", "80", "-y", "30")
	// tmux re-wraps the rows itself at once (mid-word); harness then
	// redraws them.
	waitRows(t, tm, func(rows []string) bool {
		return widest(rows) <= 80 && strings.TrimSpace(rows[len(rows)-1]) == "›" && sentencesWhole(rows, sentences)
	})
	checkWrapped(t, tm.visible(), 80, sentences)
	// The prompt is drawn once: no stale copies of the input line.
	tm.keys("-l", "typed line")
	tm.waitFor("typed text", "› typed line")
	if n := strings.Count(strings.Join(tm.visible(), "\n"), "typed line"); n != 1 {
		t.Errorf("the input line is on screen %d times after resizing", n)
	}
	tm.keys("C-u")
	tm.keys("C-d")
	tm.waitExit()
}

// sentencesWhole reports whether every sentence that starts on screen and
// fits below is whole.
func sentencesWhole(rows, sentences []string) bool {
	joined := strings.Join(strings.Fields(strings.Join(rows, " ")), " ")
	for _, s := range sentences {
		i := strings.Index(joined, s[:20])
		if i >= 0 && len(joined)-i >= len(s) && !strings.Contains(joined, s) {
			return false
		}
	}
	return true
}

func widest(rows []string) int {
	w := 0
	for _, r := range rows {
		w = max(w, len([]rune(strings.TrimRight(r, " "))))
	}
	return w
}

func waitRows(t *testing.T, tm *tmuxSession, ok func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(tmuxDeadline)
	for time.Now().Before(deadline) {
		if ok(tm.visible()) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("the screen never got there:\n%s", strings.Join(tm.visible(), "\n"))
}

// TestChatTmuxEditPrompt: the edit_file prompt shows the diff, with line
// numbers, before anything is written; v shows all of a long one in a
// pager; a refusal leaves the file alone.
func TestChatTmuxEditPrompt(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	var src strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&src, "line %d\n", i)
	}
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte(src.String()), 0o644)
	tm := startTmux(t, 100, 40, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.waitPrompt()
	edit, _ := json.Marshal(map[string]string{"path": "notes.txt", "old_string": "line 12\n", "new_string": "line twelve\n"})
	long := strings.Repeat("a new line\n", 80)
	write, _ := json.Marshal(map[string]string{"path": "long.txt", "content": long})
	srv.Enqueue(
		llmtest.Reply{Text: "Editing.", ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Input: string(edit)}}},
		llmtest.Reply{Text: "Now a long file.", ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: string(write)}}},
		llmtest.Reply{Text: "Done with both."},
	)
	tm.typeLine("change line 12")
	tm.waitFor("edit prompt", "edit a file")
	tm.waitFor("answer line", "╰ allow?")
	screen := tm.screen()
	for _, want := range []string{"notes.txt", "-1 +1 lines", "10   line 10", "12 - line 12", "12 + line twelve", "14   line 14", "yes, always: ", "yes, for this session: ", "yes, and allow all edits this session"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the edit prompt lacks %q:\n%s", want, screen)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "notes.txt")); strings.Contains(string(b), "twelve") {
		t.Error("the file changed before the approval")
	}
	tm.capture("edit-prompt")
	tm.answer("y")
	tm.waitFor("write prompt", "write a file")
	tm.waitFor("write preview", "new file · 80 lines")
	tm.waitForCount("answer line for the write", "╰ allow?", 2)
	if s := tm.screen(); !strings.Contains(s, "more rows (v shows the whole of it)") || !strings.Contains(s, "v  view the whole change") {
		t.Errorf("a long write offers no pager:\n%s", s)
	}
	tm.answer("v")
	waitRows(t, tm, func(rows []string) bool { return strings.Contains(strings.Join(rows, "\n"), "q back to the prompt") })
	tm.keys("q")
	waitRows(t, tm, func(rows []string) bool { return !strings.Contains(strings.Join(rows, "\n"), "q back to the prompt") })
	tm.refuse("not now")
	tm.waitFor("final text", "Done with both.")
	if b, _ := os.ReadFile(filepath.Join(proj, "notes.txt")); !strings.Contains(string(b), "line twelve\n") {
		t.Errorf("the approved edit was not made:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(proj, "long.txt")); err == nil {
		t.Error("the refused write happened")
	}
	tm.keys("C-d")
	tm.waitExit()
}

// TestChatTmuxEscape: Esc interrupts a streaming reply like Ctrl-C, the
// partial reply stays and the model is told, and the next /cost is a
// command (the Esc did not swallow its slash); at a permission prompt Esc
// stops the turn as well.
func TestChatTmuxEscape(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	tm := startTmux(t, 100, 30, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.waitPrompt()
	slow := "The first words arrive, then many more follow slowly " + strings.Repeat("and on ", 300)
	srv.Enqueue(llmtest.Reply{Text: slow, Delay: 30 * time.Millisecond}, llmtest.Reply{Text: "After the interrupt."})
	tm.typeLine("talk slowly")
	tm.waitFor("streaming", "The first words arrive")
	tm.keys("Escape")
	tm.waitFor("interrupt notice", "⏹ interrupted")
	tm.waitPrompt()
	tm.capture("escape")
	tm.typeLine("/cost")
	tm.waitFor("/cost view", "cache read")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after Esc and /cost, want 1: /cost reached the model", n)
	}
	tm.typeLine("go on")
	tm.waitFor("next reply", "After the interrupt.")
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	var kept string
	for _, m := range msgs {
		if m.Role == "assistant" {
			kept = m.PlainText()
		}
	}
	if !strings.HasPrefix(kept, "The first words arrive") || !strings.HasSuffix(kept, agent.InterruptedReply) {
		t.Errorf("the interrupted reply was not kept and marked for the model: %q", kept)
	}

	// Esc at a permission prompt stops the turn too: the call is refused.
	srv.Enqueue(llmtest.Reply{Text: "Making it.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch esc-file"}`}}})
	tm.typeLine("make a file")
	tm.waitFor("permission prompt", "╰ allow?")
	tm.keys("Escape")
	tm.waitForCount("interrupted at the prompt", "⏹ interrupted", 2)
	tm.waitPrompt()
	if _, err := os.Stat(filepath.Join(proj, "esc-file")); err == nil {
		t.Error("the command ran after Esc at its prompt")
	}
	tm.keys("C-d")
	tm.waitExit()
}

// TestChatTmuxContinue: --continue resumes the conversation last used,
// not a session opened and left without a message or one started with
// /clear, and shows where it stood.
func TestChatTmuxContinue(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	env := tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5")

	srv.Enqueue(llmtest.Reply{Text: "The answer is **forty-two**."})
	tm := startTmux(t, 100, 30, proj, env, bin, "--project", proj)
	tm.typeLine("what is the answer?")
	tm.waitFor("reply", "The answer is forty-two.")
	tm.typeLine("/clear")
	tm.waitFor("cleared", "new session ")
	tm.keys("C-d")
	tm.waitExit()

	// Opened and quit without a word.
	tm = startTmux(t, 100, 30, proj, env, bin, "--project", proj)
	tm.waitPrompt()
	tm.keys("C-d")
	tm.waitExit()

	list, _ := os.ReadDir(filepath.Join(home, ".agents", "sessions"))
	if len(list) != 1 {
		t.Fatalf("%d project session dirs", len(list))
	}
	logs, _ := os.ReadDir(filepath.Join(home, ".agents", "sessions", list[0].Name()))
	if len(logs) != 1 {
		t.Errorf("%d session logs on disk, want 1: sessions without a message were written", len(logs))
	}

	tm = startTmux(t, 100, 30, proj, env, bin, "--project", proj, "--continue")
	tm.waitFor("banner", "resumed ")
	tm.waitPrompt()
	s := tm.screen()
	for _, want := range []string{"(1 step, ", "; 2 messages in context)", "› what is the answer?", "The answer is forty-two.", "resumed here"} {
		if !strings.Contains(s, want) {
			t.Errorf("the resumed session lacks %q:\n%s", want, s)
		}
	}
	tm.capture("continue")
	tm.keys("C-d")
	tm.waitExit()
}

// heldProxy forwards to the fake provider at target; a reply stream stops
// right after the bytes that carry hold and goes on when release is
// called (once for each such reply), so a test can act while a reply is
// surely mid-stream.
func heldProxy(t *testing.T, target, hold string) (url string, release func()) {
	t.Helper()
	u, err := neturl.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{}, 8)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		resp.Body = &heldBody{ReadCloser: resp.Body, hold: hold, gate: gate, ctx: resp.Request.Context()}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL, func() { gate <- struct{}{} }
}

// heldBody is a response body that waits at the gate once hold has gone
// by, before handing on anything after it.
type heldBody struct {
	io.ReadCloser
	hold         string
	gate         chan struct{}
	ctx          context.Context // the request's: the client went away
	seen         string          // the last bytes read, to find hold across reads
	passed, open bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.passed && !b.open {
		select {
		case <-b.gate:
			b.open = true
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	n, err := b.ReadCloser.Read(p)
	if !b.passed {
		b.seen += string(p[:n])
		b.passed = strings.Contains(b.seen, b.hold)
		b.seen = b.seen[max(0, len(b.seen)-len(b.hold)):]
	}
	return n, err
}

// heldSession starts harness in an 80×30 window against the fake
// provider behind heldProxy (replies hold after "HOLD") and waits for the
// prompt.
func heldSession(t *testing.T) (tm *tmuxSession, srv *llmtest.Server, release func()) {
	t.Helper()
	bin := tmuxHarness(t)
	srv = llmtest.NewServer(t)
	url, release := heldProxy(t, srv.URL, "HOLD")
	home, proj := t.TempDir(), t.TempDir()
	tm = startTmux(t, 80, 30, proj, tmuxEnv(home, url, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.waitPrompt()
	return tm, srv, release
}

// TestChatTmuxTypeAhead: what the user types while a reply streams shows
// at once on a row below the reply, redrawn as the reply grows and never
// mixed into it; Enter queues it, and it is sent as the next prompt when
// the turn ends. Typed ahead and then interrupted, it waits at the prompt.
func TestChatTmuxTypeAhead(t *testing.T) {
	t.Parallel() // see tmuxParallel
	tm, srv, release := heldSession(t)
	first := "The reply begins with a paragraph that is long enough to wrap at eighty columns, with **bold** words in it, and then it stops for a while HOLD"
	rest := " and goes on to the end of its sentence.\n\n- an item that streams after the typing\n- and another one\n\n| file | state |\n|---|---|\n| main.go | fine |\n\nThe last paragraph of the reply, which is also long enough to wrap at eighty columns."
	srv.Enqueue(
		llmtest.Reply{Text: first + rest, Delay: 5 * time.Millisecond},
		llmtest.Reply{Text: "Got the queued question."},
		llmtest.Reply{Text: "The third reply starts HOLD and is never let go on", Delay: 5 * time.Millisecond},
	)
	tm.typeLine("explain it")
	tm.waitFor("the reply up to the hold", "stops for a while HOLD")
	tm.keys("-l", "next question")
	tm.waitFor("the typed-ahead row", "queued: next question")
	if s := tm.screen(); strings.Contains(s, "─ claude-sonnet-4-5") || strings.Contains(s, "end of its sentence") {
		t.Fatalf("the turn was over before the typed text showed:\n%s", s)
	}
	tm.keys("Enter")
	tm.waitFor("the queued line", "queued: next question ⏎ (sent when this turn ends)")
	rows := tm.visible()
	if last := strings.TrimSpace(rows[len(rows)-1]); !strings.HasPrefix(last, "queued: next question") {
		t.Errorf("the queued row is not below the reply: last row %q", last)
	}
	for _, r := range rows {
		if strings.Contains(r, "next question") && !strings.HasPrefix(strings.TrimSpace(r), "queued: ") {
			t.Errorf("the typed text is mixed into the reply: %q", r)
		}
	}
	tm.capture("typeahead")
	release()

	tm.waitFor("the reply to the queued line", "Got the queued question.")
	tm.waitForCount("two status lines", "─ claude-sonnet-4-5", 2)
	if got := lastUser(srv); got != "next question" {
		t.Errorf("the queued line reached the model as %q", got)
	}
	s := tm.screen()
	for _, want := range []string{
		"The reply begins with a paragraph that is long enough to wrap at eighty columns,\nwith bold words in it, and then it stops for a while HOLD and goes on to the end\nof its sentence.",
		"• an item that streams after the typing\n• and another one",
		"main.go", "The last paragraph of the reply",
		"› next question\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "queued:") || strings.Count(s, "next question") != 1 || strings.Contains(s, "**") {
		t.Errorf("the queued row or raw text was left behind:\n%s", s)
	}

	// Typed ahead, Enter, then Esc: the line waits at the prompt, unsent.
	tm.typeLine("once more")
	tm.waitFor("the third reply streaming", "The third reply starts HOLD")
	tm.keys("-l", "second thoughts")
	tm.keys("Enter")
	tm.waitFor("queued again", "queued: second thoughts ⏎")
	tm.keys("Escape")
	tm.waitFor("interrupted", "⏹ interrupted")
	tm.waitFor("the queued line at the prompt", "› second thoughts")
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests: the line queued before the interrupt was sent", n)
	}
	tm.keys("C-u")
	tm.keys("C-d")
	tm.waitExit()
}

// TestChatTmuxResizeMidStream: the window grows while a reply streams
// and shrinks at the prompt; each time the screen is drawn again for the
// new width with all it showed (the tool call and its result, the reply
// rendered and word-wrapped, the status line, the prompt once), and the
// redraw pushes no copy of the screen into the scrollback.
func TestChatTmuxResizeMidStream(t *testing.T) {
	t.Parallel() // see tmuxParallel
	tm, srv, release := heldSession(t)
	sentences := []string{
		"The first paragraph is long enough to wrap at eighty columns and again at seventy, and it has bold words in it.",
		"The second paragraph streams HOLD while the window grows, and it too is long enough to wrap at every width.",
	}
	text := "## Findings\n\n" + strings.Replace(sentences[0], "bold words", "**bold words**", 1) + "\n\n" + sentences[1] +
		"\n\n| file | state |\n|---|---|\n| main.go | fine |\n\nDone."
	srv.Enqueue(
		llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo hello-from-the-tool"}`}}},
		llmtest.Reply{Text: text, Delay: 5 * time.Millisecond},
	)
	tm.typeLine("check it")
	tm.waitFor("the reply up to the hold", "streams HOLD")
	tm.run("resize-window", "-t", tm.name, "-x", "120", "-y", "30")
	release()
	tm.waitFor("status line", "─ claude-sonnet-4-5")
	wantAll := func(rows []string, width int) bool {
		s := strings.Join(rows, "\n")
		for _, want := range []string{"› check it", "Let me look.", "⚙ bash  echo hello-from-the-tool", "↳ exit 0", "Findings", "main.go │ fine", "Done.", "─ claude-sonnet-4-5 · ctx"} {
			if !strings.Contains(s, want) {
				return false
			}
		}
		return widest(rows) <= width && strings.TrimSpace(rows[len(rows)-1]) == "›" && sentencesWhole(rows, sentences)
	}
	waitRows(t, tm, func(rows []string) bool { return wantAll(rows, 120) && widest(rows) > 80 })
	checkWrapped(t, tm.visible(), 120, []string{strings.ReplaceAll(sentences[0], "**", ""), sentences[1]})

	if n := strings.Count(tm.screen(), "Let me look."); n != 1 {
		t.Errorf("the tool call's text is %d times in the scrollback and screen: the redraw copied the screen into the scrollback", n)
	}

	// Narrower, at the prompt (the terminal pushes what its re-wrapping
	// makes too tall into the scrollback: only the screen is checked).
	tm.run("resize-window", "-t", tm.name, "-x", "70", "-y", "30")
	waitRows(t, tm, func(rows []string) bool { return wantAll(rows, 70) })
	checkWrapped(t, tm.visible(), 70, sentences)
	tm.capture("resized-70")
	tm.keys("C-d")
	tm.waitExit()
}
