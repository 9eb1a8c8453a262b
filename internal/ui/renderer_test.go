package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

func testRenderer(w, h int, color bool) (*Renderer, *screen) {
	scr := newScreen(w, h)
	tm := &Term{Out: scr, TTY: true, Style: Style{Color: color}, Size: func() (int, int) { return w, h }}
	return NewRenderer(tm, nil), scr
}

func stream(r *Renderer, chunks ...string) {
	for _, c := range chunks {
		r.OnEvent(llm.Event{Type: llm.EventText, Text: c})
	}
}

func reply(text string, u llm.Usage) *llm.Reply {
	return &llm.Reply{Message: llm.Text(llm.RoleAssistant, text), StopReason: llm.StopEnd, Usage: u, Model: "m"}
}

func TestRendererReplacesStreamedMarkdown(t *testing.T) {
	r, scr := testRenderer(30, 20, true)
	defer r.Close()
	r.StartTurn()
	src := "## Plan\n\nRun **all** the tests with a long line that wraps around the screen.\n\n```sh\ngo test ./...\n```\n"
	// Stream in awkward pieces, splitting markers.
	stream(r, "\n\n## Pl", "an\n\nRun **a", "ll** the tests with a long line that wraps around the screen.")
	// The heading is complete and rendered; the paragraph still streams raw.
	if got := scr.all(); !strings.Contains(got, "**all**") || strings.Contains(got, "## Plan") {
		t.Fatalf("the streaming paragraph is not raw, or the complete heading not rendered:\n%s", got)
	}
	stream(r, "\n\n``", "`sh\ngo test ./...\n")
	if got := scr.all(); strings.Contains(got, "**all**") || !strings.Contains(got, "│ go test ./...") {
		t.Fatalf("a complete paragraph is left raw, or a complete code line is not shown:\n%s", got)
	}
	stream(r, "```\n")
	r.OnReply(reply(src, llm.Usage{Input: 10, Output: 5}))
	r.EndTurn(false)
	got := scr.all()
	for _, gone := range []string{"**", "```", "## Plan"} {
		if strings.Contains(got, gone) {
			t.Errorf("streamed raw text %q left on screen:\n%s", gone, got)
		}
	}
	if strings.Count(got, "Plan") != 1 || strings.Count(got, "go test ./...") != 1 {
		t.Errorf("text not shown exactly once:\n%s", got)
	}
	for _, want := range []string{"Run all the tests with a long\nline that wraps around the\nscreen.", "│ go test ./..."} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, got)
		}
	}
}

// A reply many times taller than the window is rendered all the same,
// block by block, and word-wrapped; the streaming block is never left raw.
func TestRendererRendersTallReply(t *testing.T) {
	r, scr := testRenderer(40, 8, true)
	defer r.Close()
	var src strings.Builder
	for i := range 20 {
		fmt.Fprintf(&src, "## Part %d\n\nThis is **paragraph %d**, long enough to wrap over a row.\n\n- item `%d`\n\n", i, i, i)
	}
	for _, c := range strings.SplitAfter(src.String(), " ") {
		stream(r, c)
	}
	r.OnReply(reply(src.String(), llm.Usage{}))
	got := scr.all()
	for _, gone := range []string{"**", "## ", "- item", "`"} {
		if strings.Contains(got, gone) {
			t.Errorf("raw %q left in a tall reply:\n%s", gone, got)
		}
	}
	if n := strings.Count(got, "• item"); n != 20 {
		t.Errorf("%d rendered items, want 20:\n%s", n, got)
	}
	if !strings.Contains(got, "This is paragraph 19, long enough to\nwrap over a row.") {
		t.Errorf("paragraph not word-wrapped:\n%s", got)
	}
}

// Without colour the layout is still rendered.
func TestRendererNoColourKeepsLayout(t *testing.T) {
	r, scr := testRenderer(40, 20, false)
	defer r.Close()
	stream(r, "# Title\n", "- **b**")
	r.OnReply(reply("", llm.Usage{}))
	if got := scr.all(); got != "Title\n• b" {
		t.Errorf("screen = %q", got)
	}
}

func TestRendererToolCalls(t *testing.T) {
	r, scr := testRenderer(60, 30, true)
	defer r.Close()
	r.StartTurn()
	stream(r, "Let me check.")
	call := llm.Block{Type: llm.BlockToolUse, ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}
	r.OnEvent(llm.Event{Type: llm.EventToolCall, Block: &call})
	r.OnReply(&llm.Reply{StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 100}})
	r.OnToolStart(call)
	out := strings.Repeat("ok  pkg\n", 7) + "[exit code: 1]"
	r.OnToolEnd(call, llm.Block{Type: llm.BlockToolResult, Content: out, IsError: true}, 1500*time.Millisecond)
	read := llm.Block{Type: llm.BlockToolUse, ID: "2", Name: "read_file", Input: json.RawMessage(`{"path":"internal/x.go"}`)}
	r.OnToolStart(read)
	r.OnToolEnd(read, llm.Block{Type: llm.BlockToolResult, Content: "no such file: internal/x.go", IsError: true}, time.Millisecond)
	r.EndTurn(false)
	got := scr.all()
	for _, want := range []string{
		"Let me check.\n⚙ bash  go test ./...\n  ↳ exit 1 · 7 lines · 1s\n    ok  pkg\n    ok  pkg\n    ok  pkg\n    … 4 more lines (/expand)\n",
		"⚙ read_file  internal/x.go\n  ↳ error · 0.0s\n    no such file: internal/x.go",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks\n%s\ngot:\n%s", want, got)
		}
	}
	if strings.Contains(got, "thinking") || strings.Contains(got, "running") {
		t.Errorf("spinner left on screen:\n%s", got)
	}
}

func TestRendererNotTerminal(t *testing.T) {
	var b strings.Builder
	r := NewRenderer(&Term{Out: &b, Size: func() (int, int) { return 80, 24 }}, nil)
	r.StartTurn()
	stream(r, "**hi**", " there")
	r.OnEvent(llm.Event{Type: llm.EventRetry, Err: errors.New("stream cut")})
	stream(r, "again")
	r.OnReply(reply("", llm.Usage{}))
	r.OnNotice(notice.Info(notice.Compacted, "compacted: 120k -> 40k tokens"))
	r.EndTurn(true)
	r.Close()
	got := b.String()
	if strings.Contains(got, "\x1b") {
		t.Errorf("escape sequences written to a non-terminal: %q", got)
	}
	want := "**hi** there\n(reply cut off; the retry starts over)\n↻ retrying: stream cut\nagain\n• compacted: 120k -> 40k tokens\n⏹ interrupted — what completed is kept; type to continue\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestRendererThinkingAndSanitize(t *testing.T) {
	var b strings.Builder
	r := NewRenderer(&Term{Out: &b, Size: func() (int, int) { return 80, 24 }}, nil)
	r.OnEvent(llm.Event{Type: llm.EventThinking, Text: "hmm\x1b]0;x\x07"})
	r.OnEvent(llm.Event{Type: llm.EventText, Text: "answer\x1b[2J"})
	r.OnNotice(notice.Warning(notice.SandboxTamper, "SANDBOX WARNING: .git/hooks changed"))
	r.Close()
	if got, want := b.String(), "✻ hmm\nanswer\n‼ SANDBOX WARNING: .git/hooks changed\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRendererSpinnerErased(t *testing.T) {
	r, scr := testRenderer(40, 10, true)
	r.StartTurn()
	if !strings.Contains(scr.text(), "thinking") {
		t.Fatalf("no spinner after StartTurn:\n%s", scr.text())
	}
	stream(r, "hello")
	r.OnReply(reply("hello", llm.Usage{}))
	r.EndTurn(false)
	r.Close()
	if got := scr.all(); got != "\nhello" {
		t.Errorf("screen = %q, want a blank line and the reply", got)
	}
}

func TestTextRows(t *testing.T) {
	tests := []struct {
		s    string
		w, n int
	}{
		{"abc", 10, 1}, {"abc\n", 10, 1}, {"abcdefghij", 10, 1}, {"abcdefghijk", 10, 2},
		{"a\n\nb", 10, 3}, {"世界世界世", 9, 2}, {"", 10, 0},
	}
	for _, tt := range tests {
		if got := textRows(tt.s, tt.w); got != tt.n {
			t.Errorf("textRows(%q, %d) = %d, want %d", tt.s, tt.w, got, tt.n)
		}
	}
}

func TestToolLine(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"bash", `{"command":"go test ./..."}`, "⚙ bash  go test ./..."},
		{"read_file", `{"path":"internal/x.go","offset":3}`, "⚙ read_file  internal/x.go"},
		{"grep", `{"pattern":"TODO","path":"internal"}`, "⚙ grep  TODO  in internal"},
		{"bash", `{"command":"echo a\necho b"}`, "⚙ bash  echo a ⏎ echo b"},
		{"todos", `{"todos":[{},{}]}`, "⚙ todos  2 items"},
		{"bash", `{"command":"` + strings.Repeat("x", 100) + `"}`, "⚙ bash  " + strings.Repeat("x", 31) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := ToolLine(Style{}, llm.Block{Name: tt.name, Input: json.RawMessage(tt.input)}, 40)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestToolResultMarkers(t *testing.T) {
	content := "x\n[timed out after 60s: the whole process tree was killed; narrow the command]\n[exit code: 124]"
	got := ToolResult(Style{}, llm.Block{Name: "bash"}, llm.Block{Content: content, IsError: true}, 60*time.Second, 80)
	want := "  ↳ exit 124 · 1 line · 1m00s\n    x\n    [timed out after 60s: the whole process tree was killed; narrow the command]\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// The context layers' markers (here a cap's) are notes, not output lines.
func TestToolResultCapMarker(t *testing.T) {
	content := "1\n2\n\n[harness cap: 90 of 100 chars cut here (lines 3-9 of 10). The whole output is in /s/f.txt.]\n10\n[exit code: 0]"
	got := ToolResult(Style{}, llm.Block{Name: "bash"}, llm.Block{Content: content}, 0, 200)
	want := "  ↳ exit 0 · 9 lines · 6 cut in the middle · 0.0s\n    1\n    2\n    \n    … 1 more line (/expand)\n    [harness cap: 90 of 100 chars cut here (lines 3-9 of 10). The whole output is in /s/f.txt.]\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestRendererHoldsOutputDuringPrompt(t *testing.T) {
	var b strings.Builder
	r := NewRenderer(&Term{Out: &b, Size: func() (int, int) { return 80, 24 }}, nil)
	defer r.Close()
	r.Pause()
	r.OnNotice(notice.Info(notice.Provider, "from a concurrent tool"))
	if strings.Contains(b.String(), "concurrent") {
		t.Fatalf("output written while a prompt owns the terminal: %q", b.String())
	}
	b.WriteString("allow? y\n") // the prompt's own line
	r.Resume()
	if got, want := b.String(), "allow? y\n• from a concurrent tool\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestSpinnerTicks checks the spinner redraws its elapsed time from its own
// goroutine, and that stopping it leaves a clean line.
func TestSpinnerTicks(t *testing.T) {
	scr := newScreen(60, 5)
	tm := &Term{Out: scr, TTY: true, Size: func() (int, int) { return 60, 5 }}
	r := NewRenderer(tm, nil)
	var mu sync.Mutex
	now := time.Unix(0, 0)
	r.spin.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		// Every look at the clock is half a second later, up to 3s: a
		// loaded machine that checks the screen rarely still sees it.
		if now.Before(time.Unix(4, 0)) {
			now = now.Add(500 * time.Millisecond)
		}
		return now
	}
	r.spin.tick = time.Millisecond
	r.StartTurn()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		text := scr.text()
		r.mu.Unlock()
		if strings.Contains(text, "thinking 3s") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spinner never showed 3s:\n%s", text)
		}
		time.Sleep(time.Millisecond)
	}
	r.EndTurn(false)
	r.Close()
	if got := scr.text(); strings.TrimSpace(got) != "" {
		t.Errorf("spinner left %q", got)
	}
}

func TestToolResultEditPreview(t *testing.T) {
	call := llm.Block{Name: "edit_file", Input: json.RawMessage(`{"path":"a.go","old_string":"x := 1\ny := 2","new_string":"x := 10\ny := 20\nz := 30\nw := 40\nv := 50"}`)}
	got := ToolResult(Style{}, call, llm.Block{Content: "edited a.go"}, 0, 80)
	want := "  ↳ ok · 0.0s\n    - x := 1\n    - y := 2\n    + x := 10\n    + y := 20\n    + z := 30\n      … 2 more\n    edited a.go\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Lines the model repeats in both strings are not shown as changed.
	call = llm.Block{Name: "edit_file", Input: json.RawMessage(`{"path":"a.go","old_string":"a := 1\nb := 2\nc := 3\n","new_string":"a := 1\nb := 20\nc := 3\n"}`)}
	got = ToolResult(Style{}, call, llm.Block{Content: "edited a.go"}, 0, 80)
	if want := "  ↳ ok · 0.0s\n    - b := 2\n    + b := 20\n    edited a.go\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A tool's time excludes the time its permission prompt waited for the
// user; a running command's last lines show above the spinner.
func TestRendererToolTimeAndLiveOutput(t *testing.T) {
	r, scr := testRenderer(60, 20, false)
	defer r.Close()
	call := llm.Block{Type: llm.BlockToolUse, ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"make"}`)}
	r.OnToolStart(call)
	r.Pause()
	r.mu.Lock()
	r.pausedAt = r.pausedAt.Add(-10 * time.Second) // the user took 10s to answer
	r.mu.Unlock()
	r.Resume()
	r.OnToolOutput(call, "compiling a\ncompiling b\n")
	r.OnToolOutput(call, "compiling c\nlinking\ndone soon\n")
	r.mu.Lock()
	r.spin.draw()
	r.mu.Unlock()
	if got := scr.text(); !strings.Contains(got, "    compiling b\n    compiling c\n    linking\n    done soon\n") || strings.Contains(got, "compiling a") {
		t.Errorf("live output not the last %d lines above the spinner:\n%s", liveRows, got)
	}
	r.OnToolEnd(call, llm.Block{Content: "done\n[exit code: 0]"}, 12500*time.Millisecond)
	got := scr.all()
	if !strings.Contains(got, "exit 0 · 1 line · 2s") {
		t.Errorf("elapsed time includes the approval wait:\n%s", got)
	}
	if strings.Contains(got, "linking") {
		t.Errorf("live output left on screen after the result:\n%s", got)
	}
	if c, res, ok := r.LastResult(1); !ok || c.ID != "c1" || !strings.HasPrefix(res.Content, "done") {
		t.Errorf("LastResult = %v %v %v", c, res, ok)
	}
}

// Keys typed while a reply streams show on a row of their own below it,
// redrawn as the reply grows, and never mix into it: at every step the
// screen above the queued row, and the whole screen at the end, are what
// the same reply gives with nothing typed. The replies hit the awkward
// places: a row filled to the last column (the pending wrap), wide
// characters, a block too tall to echo raw, a table, a fenced block.
func TestRendererQueuedBelowStream(t *testing.T) {
	exact := strings.Repeat("x", 29) + "y" // fills a 30-column row exactly
	tall := strings.TrimSpace(strings.Repeat("a paragraph that goes on and on ", 30))
	tests := []struct {
		name, src string
		w, h      int
		color     bool
	}{
		{"paragraphs", "First paragraph with **bold** text that wraps over the row.\n\nSecond one, also long enough to wrap once or twice here.\n", 30, 12, true},
		{"exact width", exact + "\n" + exact + exact + "\nafter it\n\n" + exact, 30, 12, false},
		{"wide", "世界世界世界世界世界世界世界世界 wide text that wraps 世界世界\n\n- 一 item\n- 二 item\n", 30, 12, true},
		{"tall", tall + "\n\nthe end", 30, 8, true},
		{"table and code", "| file | state |\n|---|---|\n| a.go | fine |\n\n```go\nfunc main() {}\n```\ndone\n", 30, 12, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, refScr := testRenderer(tt.w, tt.h, tt.color)
			defer ref.Close()
			r, scr := testRenderer(tt.w, tt.h, tt.color)
			defer r.Close()
			ref.StartTurn()
			r.StartTurn()
			typed := ""
			src := tt.src
			for i := 0; len(src) > 0; i++ {
				n := min(len(src), 3+i%5)
				for !utf8.ValidString(src[:n]) {
					n++
				}
				stream(ref, src[:n])
				stream(r, src[:n])
				src = src[n:]
				if i%3 == 0 {
					typed += string(rune('a' + i%26))
					if i%9 == 0 {
						typed += "\r"
					}
					r.SetQueued(typed)
				}
				if typed == "" {
					continue
				}
				got, want := scr.all(), refScr.all()
				rows := strings.Split(got, "\n")
				last := rows[len(rows)-1]
				q := []rune(queuedText(typed))
				if end := string(q[max(0, len(q)-8):]); !strings.HasPrefix(last, "queued: ") || !strings.Contains(last, end) {
					t.Fatalf("step %d: the last row is not the queued text %q:\n%s", i, queuedText(typed), got)
				}
				if above := strings.TrimRight(strings.Join(rows[:len(rows)-1], "\n"), "\n"); above != want {
					t.Fatalf("step %d: the reply with a queued row differs from the reply alone:\n%s\n--- want:\n%s", i, above, want)
				}
			}
			ref.OnReply(reply(tt.src, llm.Usage{}))
			r.OnReply(reply(tt.src, llm.Usage{}))
			r.SetQueued("")
			ref.EndTurn(false)
			r.EndTurn(false)
			if got, want := scr.all(), refScr.all(); got != want {
				t.Errorf("the finished reply differs:\n%s\n--- want:\n%s", got, want)
			}
		})
	}
}

// The queued row is drawn under the spinner too, and a key sequence (an
// arrow, a bracketed paste) typed ahead shows as nothing.
func TestRendererQueuedUnderSpinner(t *testing.T) {
	r, scr := testRenderer(60, 10, false)
	defer r.Close()
	r.StartTurn()
	r.SetQueued("fix\x1b[Dx\x1b[200~ it\x1b[201~\r")
	got := scr.text()
	if !strings.Contains(got, "thinking") || !strings.HasSuffix(got, "\nqueued: fixx it ⏎ (sent when this turn ends)") {
		t.Errorf("no queued row under the spinner:\n%s", got)
	}
	stream(r, "hello")
	if got := scr.text(); !strings.HasSuffix(got, "hello\n\nqueued: fixx it ⏎ (sent when this turn ends)") || strings.Contains(got, "thinking") {
		t.Errorf("the queued row did not move under the reply:\n%s", got)
	}
	r.OnReply(reply("hello", llm.Usage{}))
	r.EndTurn(false)
	if got := scr.all(); got != "\nhello" {
		t.Errorf("screen after the turn = %q, want the reply alone", got)
	}
}

// Reflow draws again all that a turn showed, for the new width: the
// prompt line, tool calls and results, notices, the reply, the status
// line, a permission box; and it clears the screen without pushing it
// into the scrollback.
func TestRendererReflowRedrawsAll(t *testing.T) {
	w := 80
	scr := newScreen(120, 30)
	tm := &Term{Out: scr, TTY: true, Style: Style{Color: true}, Size: func() (int, int) { return w, 30 }}
	r := NewRenderer(tm, nil)
	defer r.Close()
	m := &Meter{Model: "claude-sonnet-4-5", Backend: "bwrap"}
	r.Remember("› check the tests")
	r.StartTurn()
	stream(r, "Let me run them.")
	call := llm.Block{Type: llm.BlockToolUse, ID: "1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./internal/ui/... ./internal/cli/... -run TestSomethingWithALongName -count=1"}`)}
	r.OnReply(&llm.Reply{StopReason: llm.StopToolUse})
	r.OnToolStart(call)
	r.RememberFunc(func(w int) string { return fmt.Sprintf("╭ permission box %d wide", w) })
	r.OnToolEnd(call, llm.Block{Type: llm.BlockToolResult, Content: "ok  harness/internal/ui\n[exit code: 0]"}, time.Second)
	r.OnNotice(notice.Notice{Text: "compacted"})
	stream(r, "All **green**: the package passes every test it has, and the long sentence wraps.")
	r.OnReply(reply("", llm.Usage{}))
	r.EndTurn(false)
	r.PrintFunc(func(w int) string { return m.StatusLine(tm.Style, w) + "\n\n" })

	w = 40
	scrolled := len(scr.scrolled)
	r.Reflow()
	got := scr.text()
	for _, want := range []string{
		"› check the tests", "Let me run them.", "⚙ bash  go test ./internal/ui/...", "╭ permission box 40 wide",
		"↳ exit 0 · 1 line · 1s", "• compacted", "All green: the package passes every test\nit has, and the long sentence wraps.",
		"─ claude-sonnet-4-5 · sandbox bwrap",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the redrawn screen lacks %q:\n%s", want, got)
		}
	}
	for _, row := range strings.Split(got, "\n") {
		if StringWidth(row) > 40 {
			t.Errorf("a redrawn row is wider than 40: %q", row)
		}
	}
	if len(scr.scrolled) != scrolled || strings.Contains(got, "-count=1") {
		t.Errorf("the redraw scrolled the screen or kept a row of the old width:\n%s", got)
	}
}
