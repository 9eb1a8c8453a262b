package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/testenv"
)

func TestStatusLine(t *testing.T) {
	m := &Meter{Model: "claude-sonnet-4-5", Window: 200_000, Price: llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, PriceKnown: true, Backend: "bwrap"}
	if got := StripANSI(m.StatusLine(Style{}, 200)); got != "─ claude-sonnet-4-5 · sandbox bwrap" {
		t.Errorf("before any reply: %q", got)
	}
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 2000, CacheWrite: 8000, Output: 1000}})
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 1000, CacheRead: 40000, CacheWrite: 4000, Output: 500}})
	got := m.StatusLine(Style{}, 200)
	// fill = 45000 + 500; cache 40000/45000 = 89%; session = 10000+1000 + 45000+500 = 56500;
	// cost = (3000*3 + 40000*0.3 + 12000*3.75 + 1500*15)/1e6 = (9000+12000+45000+22500)/1e6 = 0.0885 (a hair under in float)
	want := "─ claude-sonnet-4-5 · ctx 46k/200k 23% · cache 89% · session 56k tok $0.088 · sandbox bwrap"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	m.PriceKnown = false
	if got := m.StatusLine(Style{}, 200); !strings.Contains(got, "session 56k tok price unknown") {
		t.Errorf("unknown price not said: %q", got)
	}
	if got := m.StatusLine(Style{}, 30); StringWidth(got) > 30 {
		t.Errorf("status line wider than the terminal: %q", got)
	}
	// A narrow window drops the cache figure, then the backend, before
	// anything is cut.
	m.PriceKnown = true
	for w, want := range map[int]string{
		86: "─ claude-sonnet-4-5 · ctx 46k/200k 23% · session 56k tok $0.088 · sandbox bwrap",
		70: "─ claude-sonnet-4-5 · ctx 46k/200k 23% · session 56k tok $0.088",
		40: "─ claude-sonnet-4-5 · ctx 46k/200k 23% …",
	} {
		if got := StripANSI(m.StatusLine(colour, w)); got != want {
			t.Errorf("at %d columns: %q, want %q", w, got, want)
		}
	}
	m.Backend = "none"
	if got := StripANSI(m.StatusLine(colour, 80)); !strings.HasSuffix(got, "· sandbox none") {
		t.Errorf("the missing sandbox gave way to the width: %q", got)
	}
	m.Backend, m.PriceKnown = "bwrap", false
	if c := StripANSI(m.CostReport(Style{})); !strings.Contains(c, "2 requests") || !strings.Contains(c, "set PRICE_INPUT") {
		t.Errorf("cost report:\n%s", c)
	}
	m.Reset()
	if _, total, n := m.Snapshot(); n != 0 || total != (llm.Usage{}) {
		t.Errorf("Reset left %v, %d", total, n)
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1234: "1.2k", 45_200: "45k", 1_250_000: "1.2M"} {
		if got := Tokens(n); got != want {
			t.Errorf("Tokens(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBanner(t *testing.T) {
	b := Banner{Version: "v0.1.0", Project: "/src/app", Model: "claude-sonnet-4-5", Provider: "anthropic", Backend: "bwrap"}
	got := b.Render(Style{}, 120)
	for _, want := range []string{"harness v0.1.0  ·  /src/app", "model    claude-sonnet-4-5 via anthropic",
		"sandbox  bwrap", "read anywhere but secrets, write only the project and /tmp, no network; git commits work, git config and",
		"hooks are read-only", "/help"} {
		if !strings.Contains(got, want) {
			t.Errorf("banner lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "!") {
		t.Errorf("warning in a healthy banner:\n%s", got)
	}
	b.Backend, b.KeyMissing, b.EndpointErr = "none", true, errors.New("connection refused")
	got = b.Render(Style{}, 80)
	for _, want := range []string{"! No sandbox", "apt install bubblewrap", "! No API key: set API_KEY in ~/.agents/env",
		"! The model endpoint did not answer (connection refused): check BASE_URL"} {
		if !strings.Contains(got, want) {
			t.Errorf("banner lacks %q:\n%s", want, got)
		}
	}
}

func TestRenderContext(t *testing.T) {
	b := Breakdown{System: 2000, Tools: 6000, Messages: 12000, ToolOutput: 80000, Window: 200000, CompactAt: 0.85, Measured: true}
	got := RenderContext(Style{}, b, 72)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if lines[0] != "context  100k / 200k tokens (50%, measured)" {
		t.Errorf("header %q", lines[0])
	}
	// 40-cell bars: tool output 80k/200k = 16 cells, system 2k = 1 (rounded up from 0.4).
	if !strings.Contains(got, "tool output "+strings.Repeat("█", 16)+strings.Repeat("░", 24)) {
		t.Errorf("tool output bar wrong:\n%s", got)
	}
	if !strings.Contains(got, "system      █"+strings.Repeat("░", 39)) {
		t.Errorf("system bar wrong:\n%s", got)
	}
	if !strings.Contains(got, "free") || !strings.Contains(got, "compaction starts at 170k (85%)") {
		t.Errorf("free / compaction lines missing:\n%s", got)
	}
	// Over the window, bars still fit.
	b.ToolOutput = 400000
	for _, l := range strings.Split(RenderContext(Style{}, b, 72), "\n") {
		if StringWidth(l) > 72 {
			t.Errorf("line wider than 72: %q", l)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		in, pattern string
		want        permission.Answer
		ok          bool
	}{
		{"y", "", permission.Answer{Choice: permission.Yes}, true},
		{" YES ", "", permission.Answer{Choice: permission.Yes}, true},
		{"n", "", permission.Answer{Choice: permission.No}, true},
		{"a", "go test ./...", permission.Answer{Choice: permission.Always}, true},
		{"always", "", permission.Answer{Choice: permission.Yes}, true},
		{"s", "go test *", permission.Answer{Choice: permission.Session}, true},
		{"session", "", permission.Answer{Choice: permission.Yes}, true},
		{"use make test instead", "", permission.Answer{Choice: permission.No, Reason: "use make test instead"}, true},
		{"", "", permission.Answer{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseAnswer(tt.in, tt.pattern)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseAnswer(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPrompter(t *testing.T) {
	testenv.Slow(t)
	req := permission.Request{Tool: "bash", Command: "git push origin main"}
	d := permission.Decision{Verdict: permission.Ask, Rule: "ask bash git push *"}
	tests := []struct {
		name, input string
		want        permission.Answer
		interrupted bool
	}{
		{"always after a stray enter", "\ra\r", permission.Answer{Choice: permission.Always}, false},
		{"session", "s\r", permission.Answer{Choice: permission.Session}, false},
		{"reason", "rnot yet, run the tests\r", permission.Answer{Choice: permission.No, Reason: "not yet, run the tests"}, false},
		{"typed reason", "use make test instead\r", permission.Answer{Choice: permission.No, Reason: "use make test instead"}, false},
		{"no", "n", permission.Answer{Choice: permission.No}, false},
		{"arrows then enter", "\x1b[B\x1b[B\x1b[A" + settled + "\r", permission.Answer{Choice: permission.Session}, false},
		{"enter picks the default", settled + "\r", permission.Answer{Choice: permission.Yes}, false},
		{"number", "3", permission.Answer{Choice: permission.Always}, false},
		{"ctrl-c", "\x03", permission.Answer{Choice: permission.No, Reason: "the user interrupted the turn"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scr := newScreen(80, 20)
			var raw strings.Builder
			tm := &Term{Out: io.MultiWriter(scr, &raw), TTY: true, Size: func() (int, int) { return 80, 20 }}
			r := NewRenderer(tm, nil)
			defer r.Close()
			interrupted := false
			p := &Prompter{R: r, Editor: NewEditor(NewInput(&pausedReader{parts: strings.Split(tt.input, settled)}), tm, EditorOptions{ForceRaw: true, NoHistory: true}),
				OnInterrupt: func() { interrupted = true }}
			got, err := p.Prompt(context.Background(), req, d, "git push origin main")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || interrupted != tt.interrupted {
				t.Errorf("got %+v (interrupted %v), want %+v (%v)", got, interrupted, tt.want, tt.interrupted)
			}
			screen := scr.all()
			for _, want := range []string{"permission  run a command", "│ git push origin main", "rule: ask bash git push *", "╰ allow?"} {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q:\n%s", want, screen)
				}
			}
			// The list was shown, the default highlighted, then replaced
			// by the answer.
			for _, want := range []string{"❯ y  yes, once", "a  yes, always: git push origin main (saved in .agents/permissions)", "s  yes, for this session: git push origin main", "r  no, and tell the model why…"} {
				if !strings.Contains(StripANSI(raw.String()), want) {
					t.Errorf("the list lacked %q:\n%s", want, StripANSI(raw.String()))
				}
			}
			if strings.Contains(screen, "↑↓ Enter picks") {
				t.Errorf("the list stayed on screen after the answer:\n%s", screen)
			}
		})
	}
	t.Run("eof", func(t *testing.T) {
		tm := &Term{Out: &strings.Builder{}, Size: func() (int, int) { return 80, 20 }}
		p := &Prompter{R: NewRenderer(tm, nil), Editor: NewEditor(NewInput(strings.NewReader("")), tm, EditorOptions{NoHistory: true})}
		if got, err := p.Prompt(context.Background(), req, d, ""); err == nil || got.Choice != permission.No {
			t.Errorf("got %+v, %v; want No and an error", got, err)
		}
	})
}

// settled, in a test's keys, waits past enterSettle before the rest.
const settled = "\x00settle\x00"

// pausedReader returns its parts one read at a time, waiting past
// enterSettle before each one after the first: keys a person types once
// the list is on screen.
type pausedReader struct {
	parts []string
	n     int
}

func (r *pausedReader) Read(p []byte) (int, error) {
	if r.n >= len(r.parts) {
		return 0, io.EOF
	}
	if r.n > 0 {
		time.Sleep(enterSettle + 50*time.Millisecond)
	}
	s := r.parts[r.n]
	r.n++
	return copy(p, s), nil
}

// "All edits this session" allows the later file edits without a prompt;
// a command still asks.
func TestPrompterAllEdits(t *testing.T) {
	var raw strings.Builder
	tm := &Term{Out: &raw, TTY: true, Size: func() (int, int) { return 80, 24 }}
	r := NewRenderer(tm, nil)
	defer r.Close()
	p := &Prompter{R: r, Editor: NewEditor(NewInput(strings.NewReader("en")), tm, EditorOptions{ForceRaw: true, NoHistory: true})}
	ask := permission.Decision{Verdict: permission.Ask, Rule: "default: ask"}
	edit := permission.Request{Tool: "edit_file", Path: "/p/a.go", Write: true}
	for i, want := range []permission.Choice{permission.Yes, permission.Yes, permission.Yes} {
		req := edit
		if i == 2 {
			req = permission.Request{Tool: "write_file", Path: "/p/new.go", Write: true}
		}
		got, err := p.Prompt(context.Background(), req, ask, "")
		if err != nil || got.Choice != want {
			t.Fatalf("edit %d: %+v, %v", i, got, err)
		}
	}
	if n := strings.Count(raw.String(), "╰ allow?"); n != 1 {
		t.Errorf("%d prompts for three edits, want 1", n)
	}
	got, err := p.Prompt(context.Background(), permission.Request{Tool: "bash", Command: "make"}, ask, "make")
	if err != nil || got.Choice != permission.No {
		t.Errorf("a command after all edits: %+v, %v; want it asked (and refused)", got, err)
	}
	out := StripANSI(raw.String())
	if strings.Count(out, "╰ allow?") != 2 || strings.Contains(out[strings.LastIndex(out, "╰ allow?"):], "all edits") {
		t.Errorf("the command's prompt was not shown, or offered all edits:\n%s", out)
	}
}

func TestRenderPermissionFile(t *testing.T) {
	got := RenderPermission(Style{}, permission.Request{Tool: "write_file", Path: "/etc/hosts", Write: true}, permission.Decision{Rule: "outside the project"}, "", 80)
	want := "╭ permission  write a file\n│ write_file  /etc/hosts\n│ rule: outside the project\n╰ allow?\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWrap(t *testing.T) {
	got := Wrap("read anywhere but secrets, write only the project", 20)
	want := []string{"read anywhere but", "secrets, write only", "the project"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
	for _, l := range Wrap(strings.Repeat("word ", 30)+"averyveryverylongwordthatcannotbreak", 24) {
		if StringWidth(l) > 24 && strings.Contains(l, " ") {
			t.Errorf("line too wide: %q", l)
		}
	}
}

func TestBannerNarrow(t *testing.T) {
	got := Banner{Model: "m", Backend: "bwrap"}.Render(Style{}, 50)
	for _, l := range strings.Split(got, "\n") {
		if StringWidth(l) > 50 {
			t.Errorf("banner line wider than 50: %q", l)
		}
	}
	if !strings.Contains(got, "  sandbox  bwrap\n           read anywhere") {
		t.Errorf("walls not on their own lines:\n%s", got)
	}
}

// The context fill follows the layers' count when given: after a
// compaction the last request's usage overstates it.
func TestStatusLineContext(t *testing.T) {
	m := &Meter{Model: "m", Window: 100000}
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 1000, CacheRead: 79000, Output: 500}})
	if got := m.StatusLine(Style{}, 200); !strings.Contains(got, "ctx 80k/100k 80%") {
		t.Errorf("from usage: %s", got)
	}
	m.SetContext(30000)
	if got := m.StatusLine(Style{}, 200); !strings.Contains(got, "ctx 30k/100k 30%") {
		t.Errorf("from the layers' count: %s", got)
	}
}

// /cost shows the reasoning share of output where the provider reports it,
// and prices output once (reasoning is inside it).
func TestCostReportReasoning(t *testing.T) {
	m := &Meter{Model: "gpt-5", Price: llm.Price{Input: 1, Output: 10}, PriceKnown: true}
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 1_000_000, Output: 100_000, Reasoning: 80_000}})
	c := StripANSI(m.CostReport(Style{}))
	if !strings.Contains(c, "reasoning") || !strings.Contains(c, "80k") || !strings.Contains(c, "(part of output)") {
		t.Errorf("no reasoning row:\n%s", c)
	}
	if !strings.Contains(c, "$2.00") { // 1M×$1 + 100k×$10, reasoning not added again
		t.Errorf("total not $2.00:\n%s", c)
	}
	m.Reset()
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 10, Output: 5}})
	if c := StripANSI(m.CostReport(Style{})); strings.Contains(c, "reasoning") {
		t.Errorf("reasoning row without reasoning:\n%s", c)
	}
}

// TestStatusLineLedger: once the ledger is set, the status line's dollars
// are its (each request at its own model's price, not the current
// model's price applied to the total), with the last turn's costliest
// cause pointing to /cost; the cause gives way first on a narrow screen.
func TestStatusLineLedger(t *testing.T) {
	m := &Meter{Model: "m", Price: llm.Price{Input: 3, Output: 15}, PriceKnown: true}
	m.Add(&llm.Reply{Usage: llm.Usage{Input: 1000, Output: 100}})
	if got := StripANSI(m.StatusLine(Style{}, 200)); !strings.Contains(got, "$0.004") {
		t.Fatalf("before the ledger: %q", got)
	}
	m.SetLedger(1.25, true, "cache miss")
	got := StripANSI(m.StatusLine(Style{}, 200))
	if !strings.Contains(got, "session 1.1k tok $1.25 · cache miss (/cost)") {
		t.Errorf("with the ledger: %q", got)
	}
	if got := StripANSI(m.StatusLine(Style{}, 45)); strings.Contains(got, "/cost") || !strings.Contains(got, "$1.25") {
		t.Errorf("narrow: %q", got)
	}
	m.SetLedger(0, false, "")
	if got := StripANSI(m.StatusLine(Style{}, 200)); !strings.Contains(got, "price unknown") {
		t.Errorf("a ledger with an unknown price: %q", got)
	}
}
