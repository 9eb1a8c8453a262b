package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// fakeClock is a clock the test moves; the fake server's cache and the
// ledger read the same one.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type ledgerSession struct {
	srv   *llmtest.Server
	agent *agent.Agent
	opts  agent.Options
	book  *ledger.Book
	hist  *history.History
	log   string
	clock *fakeClock
	spill string
	proj  string
}

// testPrice is a price with every tier different, so a tier put in the
// wrong place shows in the dollars.
var testPrice = llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func newLedgerSession(t *testing.T, format string, cfg history.Config, todos func() string) *ledgerSession {
	t.Helper()
	srv := llmtest.NewServer(t)
	clock := &fakeClock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	srv.CacheTTL(ledger.DefaultTTL, clock.Now)
	var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	if format == "openai" {
		p = openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k"})
	}
	proj := filepath.Join(t.TempDir(), "p")
	os.MkdirAll(proj, 0o755)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "s.jsonl")
	lg, err := sessionlog.Create(logPath, sessionlog.Meta{ID: "led"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	cfg.SpillDir = filepath.Join(t.TempDir(), "spill")
	h := history.New(cfg)
	book := ledger.New(func(string) (llm.Price, bool) { return testPrice, true })
	book.Clock = clock.Now
	opts := agent.Options{
		Provider: p, Model: "m1", System: "You are harness.", SessionID: "led",
		Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), tools.Builtins(&tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}})...),
		History: h, Log: lg, Reminder: reminder.New(pol.Project(), nil), Ledger: book, Todos: todos,
	}
	return &ledgerSession{srv: srv, agent: agent.New(opts), opts: opts, book: book, hist: h, log: logPath, clock: clock, spill: cfg.SpillDir, proj: proj}
}

func (s *ledgerSession) run(t *testing.T, prompt string) *agent.Result {
	t.Helper()
	res, err := s.agent.Run(context.Background(), prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// answered are the requests the server answered with usage.
func answered(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Rejected == "" {
			out = append(out, r)
		}
	}
	return out
}

// TestLedgerBigToolOutputs is a run whose work is big tool outputs,
// through the real loop, adapters and the fake server's prefix cache: the
// largest kind is the tool results, the input total is the reported usage
// (the kinds add up to it within 1%), and every request's tiers are the
// server's own cache accounting, on both wire formats.
func TestLedgerBigToolOutputs(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			s := newLedgerSession(t, format, history.Config{Cap: 60000}, nil)
			s.srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 9000"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 2 9001"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 3 9002"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 4 9003"}`}}},
				llmtest.Reply{Text: "counted"},
			)
			res := s.run(t, "count, four times")
			reqs := answered(s.srv)
			recs := s.book.Records()
			if len(recs) != len(reqs) || len(recs) != 5 {
				t.Fatalf("%d records for %d answered requests, want 5 each", len(recs), len(reqs))
			}
			reported := 0
			for i, r := range recs {
				u := reqs[i].Usage
				want := ledger.Tiers{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Uncached: u.Input}
				if r.Tiers != want {
					t.Errorf("request %d: tiers %+v, the server reported %+v", i, r.Tiers, want)
				}
				if r.InputTotal != reqs[i].Tokens {
					t.Errorf("request %d: input total %d, the server counted %d", i, r.InputTotal, reqs[i].Tokens)
				}
				reported += u.Prompt()
				if r.Purpose != ledger.PurposeStep || !r.KindsEstimated {
					t.Errorf("request %d: purpose %q, kinds estimated %v", i, r.Purpose, r.KindsEstimated)
				}
			}
			if recs[1].Tiers.CacheRead == 0 {
				t.Error("the second request read nothing from the fake server's cache: the test does not exercise the tiers")
			}
			sum := res.Ledger
			if sum.InputTotal != reported {
				t.Errorf("ledger input total %d, reported %d", sum.InputTotal, reported)
			}
			kinds := 0
			for _, p := range sum.Kinds {
				kinds += p.Tokens
			}
			if math.Abs(float64(kinds-reported)) > 0.01*float64(reported) {
				t.Errorf("the kinds add up to %d, the reported input is %d (over 1%% apart)", kinds, reported)
			}
			if got := sum.Largest(); got != ledger.ToolResults {
				t.Errorf("largest kind %q, want tool_results (kinds %+v)", got, sum.Kinds)
			}
			// The dollars are the tiers at their prices.
			want := testPrice.Cost(llm.Usage{Input: sum.Tiers.Uncached, CacheRead: sum.Tiers.CacheRead, CacheWrite: sum.Tiers.CacheWrite, Output: sum.Output})
			if math.Abs(sum.USD-want) > 1e-9 {
				t.Errorf("ledger $%f, the tiers at list price $%f", sum.USD, want)
			}
			kindUSD := 0.0
			for _, p := range sum.Kinds {
				kindUSD += p.USD
			}
			if math.Abs(kindUSD-sum.InputUSD) > 1e-6 {
				t.Errorf("the kinds' dollars add up to $%f, the input cost $%f", kindUSD, sum.InputUSD)
			}
			// Every request is in the log, and the log alone gives the same ledger.
			entries, err := sessionlog.ReadFile(s.log)
			if err != nil {
				t.Fatal(err)
			}
			if got := ledger.Summarize(ledger.FromEntries(entries)); got.InputTotal != reported || got.Requests != 5 {
				t.Errorf("from the log: %d requests, input %d; want 5, %d", got.Requests, got.InputTotal, reported)
			}
		})
	}
}

func causes(rs []ledger.Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Cause)
	}
	return out
}

func hasCause(rs []ledger.Reason, cause string) (ledger.Reason, bool) {
	for _, r := range rs {
		if r.Cause == cause {
			return r, true
		}
	}
	return ledger.Reason{}, false
}

// warm runs a first turn long enough to cache (tool output of a few
// thousand tokens).
func warm(t *testing.T, s *ledgerSession) {
	t.Helper()
	s.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 1500"}`}}},
		llmtest.Reply{Text: "done"},
	)
	s.run(t, "count a little")
}

// TestLedgerNamesExpensiveTurns drives one cause of an expensive turn per
// case through the loop and the fake server, and checks the ledger names
// that cause and no cache miss for a control turn without it.
func TestLedgerNamesExpensiveTurns(t *testing.T) {
	t.Run("model switch", func(t *testing.T) {
		s := newLedgerSession(t, "anthropic", history.Config{}, nil)
		warm(t, s)
		opts := s.opts
		opts.Model = "m2" // what /model does: a new agent, the same history and ledger
		s.agent = agent.New(opts)
		s.srv.Enqueue(llmtest.Reply{Text: "ok"})
		res := s.run(t, "go on")
		why, ok := hasCause(res.Ledger.Reasons, ledger.CauseModelSwitch)
		if !ok {
			t.Fatalf("reasons %v, want a model switch", causes(res.Ledger.Reasons))
		}
		if !strings.Contains(why.Text, "from m1 to m2") || why.Tokens <= 0 || why.USD <= 0 {
			t.Errorf("reason %+v", why)
		}
	})
	t.Run("idle expiry", func(t *testing.T) {
		s := newLedgerSession(t, "anthropic", history.Config{}, nil)
		warm(t, s)
		// Within the TTL: the cache holds, no miss is named.
		s.clock.Advance(2 * time.Minute)
		s.srv.Enqueue(llmtest.Reply{Text: "ok"})
		res := s.run(t, "still there?")
		if len(res.Ledger.Reasons) != 0 {
			t.Fatalf("a turn 2 minutes after the last: reasons %v, want none", causes(res.Ledger.Reasons))
		}
		s.clock.Advance(7 * time.Minute)
		s.srv.Enqueue(llmtest.Reply{Text: "ok"})
		res = s.run(t, "and now?")
		why, ok := hasCause(res.Ledger.Reasons, ledger.CauseIdleExpiry)
		if !ok {
			t.Fatalf("reasons %v, want an idle expiry", causes(res.Ledger.Reasons))
		}
		if !strings.Contains(why.Text, "idle for 7m0s") || !strings.Contains(why.Text, "5m0s") {
			t.Errorf("reason text %q", why.Text)
		}
		if res.Ledger.Tiers.CacheRead != 0 {
			t.Errorf("the fake server read %d tokens from an expired cache", res.Ledger.Tiers.CacheRead)
		}
	})
	t.Run("an edit", func(t *testing.T) {
		// The strip layer cuts a big result once it is two messages old,
		// under a strategy that does not tell the provider to keep the
		// volatile tail out of its cache (the seed's): the request after
		// names the edit, its message and its layer.
		s := newLedgerSession(t, "anthropic", history.Config{Strategy: stripEveryStep{}}, nil)
		s.srv.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 1800"}`}}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo a"}`}}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo b"}`}}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo c"}`}}},
			llmtest.Reply{Text: "done"},
		)
		s.run(t, "count then echo")
		first := firstStripped(t, s.log)
		var found *ledger.Reason
		for _, r := range s.book.Records() {
			if why, ok := hasCause(r.Reasons, ledger.CauseEdit); ok {
				found = &why
				break
			}
		}
		if found == nil {
			for i, r := range s.book.Records() {
				t.Logf("%d: %+v %v", i, r.Tiers, causes(r.Reasons))
			}
			t.Fatal("no request named the edit")
		}
		if found.Layer != history.LayerStrip || found.Message != first || !strings.Contains(found.Text, fmt.Sprintf("message %d by the strip layer", first)) {
			t.Errorf("reason %+v, want the strip layer at message %d", *found, first)
		}
	})
	t.Run("a large result", func(t *testing.T) {
		s := newLedgerSession(t, "anthropic", history.Config{Cap: 60000}, nil)
		s.srv.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo small"}`}}},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 8000"}`}}},
			llmtest.Reply{Text: "done"},
		)
		s.run(t, "look")
		recs := s.book.Records()
		if _, ok := hasCause(recs[1].Reasons, ledger.CauseLargeResult); ok {
			t.Errorf("a 6-char result named as large: %v", causes(recs[1].Reasons))
		}
		why, ok := hasCause(recs[2].Reasons, ledger.CauseLargeResult)
		if !ok {
			t.Fatalf("reasons %v, want a large result", causes(recs[2].Reasons))
		}
		if why.Tool != "bash" || why.Tokens < 4096 || !regexp.MustCompile(`bash returned 3\d{4} chars`).MatchString(why.Text) {
			t.Errorf("reason %+v", why)
		}
	})
	t.Run("a compaction", func(t *testing.T) {
		s := newLedgerSession(t, "anthropic", history.Config{}, nil)
		warm(t, s)
		s.srv.Enqueue(llmtest.Reply{Text: "<summary>## Goal\ncount\n## What happened\nCounted.\n## State\nfine</summary>"})
		if err := s.agent.Compact(context.Background(), "", nil); err != nil {
			t.Fatal(err)
		}
		recs := s.book.Records()
		last := recs[len(recs)-1]
		if last.Purpose != ledger.PurposeCompact {
			t.Fatalf("last record's purpose %q", last.Purpose)
		}
		if _, ok := hasCause(last.Reasons, ledger.CauseCompaction); !ok {
			t.Errorf("reasons %v, want the compaction's own cost", causes(last.Reasons))
		}
		// The next request starts from the summary: an edit at message 0.
		s.srv.Enqueue(llmtest.Reply{Text: "ok"})
		res := s.run(t, "next")
		why, ok := hasCause(res.Ledger.Reasons, ledger.CauseEdit)
		if !ok || why.Layer != history.LayerSummary || why.Message != 0 {
			t.Errorf("reasons %+v, want an edit at message 0 by the summary layer", res.Ledger.Reasons)
		}
	})
}

// stripEveryStep strips old results before every request and keeps no
// part of the prompt out of the cache.
type stripEveryStep struct{}

func (stripEveryStep) Name() string { return "strip-every-step" }
func (stripEveryStep) Layers() history.Layers {
	return history.Layers{InTurn: history.StripEveryStep, StripAtTurnEnd: true}
}

// firstStripped is the message index of the first strip edit logged.
func firstStripped(t *testing.T, logPath string) int {
	t.Helper()
	entries, err := sessionlog.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type != sessionlog.TypeEdit {
			continue
		}
		var ed history.Edit
		json.Unmarshal(e.Edit, &ed)
		if ed.Layer == history.LayerStrip && len(ed.Blocks) > 0 {
			return ed.Blocks[0].Message
		}
	}
	t.Fatal("no strip edit was logged")
	return -1
}

// TestCompactionKeepsTheTask compacts a test session twice: the first
// request stays verbatim, the todo list and the files touched are kept by
// harness, the first note's decisions survive the second, what was
// removed is logged with sizes, and the model reads a removed result back
// with read_file from the path the summary names.
func TestCompactionKeepsTheTask(t *testing.T) {
	todos := "- [x] read the numbers\n- [ ] write the report"
	s := newLedgerSession(t, "anthropic", history.Config{}, func() string { return todos })
	first := "FIRST REQUEST: count to 2000, then write report.txt saying how many lines there were. Keep the wording 'lines, exactly'."
	s.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 2000"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Input: `{"path":"report.txt","content":"2000 lines, exactly\n"}`}}},
		llmtest.Reply{Text: "done"},
	)
	s.run(t, first)
	s.srv.Enqueue(llmtest.Reply{Text: "<summary>## Goal\ncount\n## What happened\nDecided to use seq, not a loop.\n## State\nreport written</summary>"})
	if err := s.agent.Compact(context.Background(), "", nil); err != nil {
		t.Fatal(err)
	}
	summary := s.hist.Messages()[0].Blocks[0]
	if summary.Layer != history.LayerSummary {
		t.Fatalf("message 0 is not the summary: %+v", summary)
	}
	for _, want := range []string{first, todos, "wrote report.txt", "seq 1 2000", "Tool results removed by this compaction"} {
		if !strings.Contains(summary.Text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary.Text)
		}
	}
	d, ok := s.agent.LastDropped()
	if !ok || d.Messages < 3 || len(d.ToolResults) != 1 {
		t.Fatalf("dropped %+v, want at least 3 messages and the seq result", d)
	}
	entries, _ := sessionlog.ReadFile(s.log)
	var logged compact.Dropped
	for _, e := range entries {
		if e.Type == sessionlog.TypeDropped {
			json.Unmarshal(e.Dropped, &logged)
		}
	}
	seq := logged.ToolResults[0]
	if seq.Tool != "bash" || max(seq.Chars, seq.Original) < 5000 || seq.Path == "" || logged.Tokens <= 0 {
		t.Fatalf("logged report %+v", logged)
	}
	// sessions show prints the report before the summary.
	var md strings.Builder
	if err := sessionlog.WriteMarkdown(&md, entries, sessionlog.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "context: the compaction below removes") || !strings.Contains(md.String(), seq.Path) {
		t.Errorf("the transcript does not show what the compaction removed:\n%s", md.String())
	}
	// The removed result, as first stored, is what the file holds.
	var original string
	for _, e := range entries {
		if e.Type == sessionlog.TypeMessage && e.Message != nil {
			for _, b := range e.Message.Blocks {
				if b.Type == llm.BlockToolResult && b.ToolUseID == seq.ID && original == "" {
					original = b.Content
				}
			}
		}
	}
	if !strings.Contains(original, "\n1999\n") {
		t.Fatalf("the logged result is not the seq output: %.80q", original)
	}

	// The model reads it back: it finds the path in the summary and
	// calls read_file with it.
	s.srv.Handle(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(fmt.Sprint(r.Messages[len(r.Messages)-1]), "1999") {
			return llmtest.Reply{Text: "read it"}
		}
		for _, b := range r.Messages[0].Blocks {
			for _, line := range strings.Split(b.Text, "\n") {
				if i := strings.Index(line, "→ "); i >= 0 && strings.Contains(line, "seq 1 2000") {
					in, _ := json.Marshal(map[string]any{"path": strings.TrimSpace(line[i+len("→ "):]), "limit": 3000})
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Input: string(in)}}}
				}
			}
		}
		return llmtest.Reply{Text: "no path found"}
	})
	res := s.run(t, "what did seq print?")
	if res.Text != "read it" {
		t.Fatalf("the model could not read the removed result back: %q", res.Text)
	}
	msgs := s.hist.Messages()
	back := msgs[len(msgs)-2].Blocks[0].Content
	if !strings.Contains(back, "1999") || !strings.Contains(back, "2000") {
		t.Errorf("read back: %.200q", back)
	}

	// A second compaction keeps the first request, the todos and the
	// first note's decision, which the new note leaves out.
	todos = "- [x] read the numbers\n- [x] write the report"
	s.srv.Handle(nil)
	s.srv.Enqueue(llmtest.Reply{Text: "<summary>## Goal\nreport\n## What happened\nRead the numbers back.\n## State\nall done</summary>"})
	if err := s.agent.Compact(context.Background(), "", nil); err != nil {
		t.Fatal(err)
	}
	summary = s.hist.Messages()[0].Blocks[0]
	for _, want := range []string{first, todos, "Decided to use seq, not a loop.", "wrote report.txt"} {
		if !strings.Contains(summary.Text, want) {
			t.Errorf("after the second compaction the summary lacks %q:\n%s", want, summary.Text)
		}
	}
}
