package ledger

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sessionlog"
)

var price = llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func req(model string, msgs ...llm.Message) *llm.Request {
	return &llm.Request{Model: model, System: strings.Repeat("s", 4000),
		Tools:    []llm.Tool{{Name: "bash", Description: strings.Repeat("d", 2000)}},
		Messages: msgs}
}

func result(id, content string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: content}}}
}

func call(id string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: json.RawMessage(`{"command":"x"}`)}}}
}

// TestKindsAddUpAndTiersByPosition: the kinds add up to the reported
// total exactly, the tiers are laid over them from the head (tools and
// system read from the cache, the newest content uncached), and the
// kinds' dollars add up to the input's.
func TestKindsAddUpAndTiersByPosition(t *testing.T) {
	b := New(func(string) (llm.Price, bool) { return price, true })
	u := llm.Usage{CacheRead: 1700, CacheWrite: 0, Input: 3001, Output: 10}
	r := b.Add(Call{Request: req("m", llm.Text(llm.RoleUser, "hi"), call("a"), result("a", strings.Repeat("x", 12000))), Usage: u})
	sum := 0
	usd := 0.0
	for _, p := range r.Kinds {
		sum += p.Tokens
		usd += p.USD
		if p.Tokens != p.Tiers.Total() {
			t.Errorf("a kind's tiers %+v do not add up to its %d tokens", p.Tiers, p.Tokens)
		}
	}
	if sum != u.Prompt() || r.InputTotal != u.Prompt() {
		t.Errorf("kinds add up to %d, input total %d, reported %d", sum, r.InputTotal, u.Prompt())
	}
	if d := usd - r.InputUSD; d > 1e-9 || d < -1e-9 {
		t.Errorf("kinds' dollars %f, input's %f", usd, r.InputUSD)
	}
	if r.Kinds[Tools].Uncached != 0 || r.Kinds[System].Uncached != 0 {
		t.Errorf("the head is not read from the cache: tools %+v system %+v", r.Kinds[Tools], r.Kinds[System])
	}
	if tr := r.Kinds[ToolResults]; tr.Uncached != u.Input {
		t.Errorf("the newest result is not the uncached tail: %+v", tr)
	}
	if Summarize([]Record{r}).Largest() != ToolResults {
		t.Errorf("largest %q", Summarize([]Record{r}).Largest())
	}
}

func TestReasons(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newBook := func() *Book {
		b := New(func(string) (llm.Price, bool) { return price, true })
		b.Clock = func() time.Time { return clock }
		return b
	}
	base := []llm.Message{llm.Text(llm.RoleUser, "go"), call("a"), result("a", strings.Repeat("y", 4000))}
	warm := llm.Usage{CacheWrite: 3000, Input: 100}
	hit := llm.Usage{CacheRead: 3000, CacheWrite: 200, Input: 100}
	miss := llm.Usage{CacheWrite: 3200, Input: 100}
	edited := append([]llm.Message(nil), base...)
	edited[2] = llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "a", Content: "[dropped]", Layer: history.LayerDrop}}}
	cases := []struct {
		name  string
		idle  time.Duration
		next  *llm.Request
		usage llm.Usage
		want  string // cause; "" none
		text  string
	}{
		{"a hit names nothing", time.Minute, req("m", base...), hit, "", ""},
		{"model switch", time.Minute, req("n", base...), miss, CauseModelSwitch, "from m to n"},
		{"idle expiry", 6 * time.Minute, req("m", base...), miss, CauseIdleExpiry, "idle for 6m0s"},
		{"an edit by the drop layer", time.Minute, req("m", edited...), llm.Usage{CacheRead: 1500, CacheWrite: 300, Input: 100}, CauseEdit, "message 2 by the drop layer"},
		{"an edit after an idle gap that emptied the cache is the expiry", 10 * time.Minute, req("m", edited...), miss, CauseIdleExpiry, "idle for 10m0s"},
		{"a miss without a cause", time.Minute, req("m", base...), miss, CauseCacheMiss, "cause unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBook()
			b.Add(Call{Request: req("m", base...), Usage: warm, Start: clock})
			start := clock.Add(c.idle)
			r := b.Add(Call{Request: c.next, Usage: c.usage, Start: start})
			var got []Reason
			for _, why := range r.Reasons {
				if why.Cause != CauseLargeResult {
					got = append(got, why)
				}
			}
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("reasons %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Cause != c.want || !strings.Contains(got[0].Text, c.text) {
				t.Fatalf("reasons %+v, want %s saying %q", got, c.want, c.text)
			}
			if got[0].USD <= 0 {
				t.Errorf("a miss with no cost: %+v", got[0])
			}
		})
	}
}

// TestLegacyAndWrite: a log without ledger entries still gives tiers and
// dollars, said to be recorded before the ledger; a log with them is read
// back whole and written per turn.
func TestLegacyAndWrite(t *testing.T) {
	u1 := llm.Usage{Input: 100, CacheWrite: 1000, Output: 20}
	entries := []sessionlog.Entry{
		{Type: sessionlog.TypeMeta, Meta: &sessionlog.Meta{ID: "x", Model: "m"}},
		{Type: sessionlog.TypeMessage, Message: &llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}},
		{Type: sessionlog.TypeUsage, Usage: &u1},
	}
	rs := Legacy(entries, "", func(string) (llm.Price, bool) { return price, true })
	if len(rs) != 1 || rs[0].Turn != 1 || rs[0].InputTotal != 1100 || rs[0].USD != price.Cost(u1) {
		t.Fatalf("legacy %+v", rs)
	}
	var out bytes.Buffer
	WriteSession(&out, rs)
	if !strings.Contains(out.String(), "predates the ledger") {
		t.Errorf("legacy output does not say it has no kinds:\n%s", out.String())
	}

	b := New(func(string) (llm.Price, bool) { return price, true })
	b.StartTurn()
	r := b.Add(Call{Request: req("m", llm.Text(llm.RoleUser, "hi")), Usage: u1})
	e, err := Entry(r)
	if err != nil {
		t.Fatal(err)
	}
	back := FromEntries([]sessionlog.Entry{e})
	if len(back) != 1 || back[0].InputTotal != r.InputTotal || back[0].Kinds[System].Tokens != r.Kinds[System].Tokens {
		t.Fatalf("read back %+v", back)
	}
	out.Reset()
	WriteSession(&out, back)
	for _, want := range []string{"session: 1 request", "by kind (estimated", "turn 1: 1 request", "system"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLoadThenAdd: a resumed session's book (loaded from a log without
// cache tiers) takes new requests, and names a model switch across the
// resume.
func TestLoadThenAdd(t *testing.T) {
	b := New(func(string) (llm.Price, bool) { return price, true })
	b.Load([]Record{{Turn: 2, Model: "m", InputTotal: 100, Tiers: Tiers{Uncached: 100}}})
	b.StartTurn()
	r := b.Add(Call{Request: req("m", llm.Text(llm.RoleUser, "hi")), Usage: llm.Usage{CacheWrite: 3000}})
	if r.Turn != 3 {
		t.Errorf("turn %d after a log ending at turn 2, want 3", r.Turn)
	}
	b2 := New(nil)
	b2.Load([]Record{{Turn: 1, Model: "m", InputTotal: 3000, Tiers: Tiers{CacheWrite: 3000}}})
	r = b2.Add(Call{Request: req("n", llm.Text(llm.RoleUser, "hi")), Usage: llm.Usage{CacheWrite: 3000}})
	if len(r.Reasons) != 1 || r.Reasons[0].Cause != CauseModelSwitch {
		t.Errorf("reasons %+v, want the model switch across the resume", r.Reasons)
	}
}
