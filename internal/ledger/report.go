package ledger

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// Entry is the session log entry of r.
func Entry(r Record) (sessionlog.Entry, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return sessionlog.Entry{}, fmt.Errorf("encoding a ledger record: %w", err)
	}
	return sessionlog.Entry{Type: sessionlog.TypeLedger, Ledger: raw, Agent: r.Agent}, nil
}

// FromEntries reads the ledger records of a session's log. A log written
// before the ledger existed has none; Legacy then builds what its usage
// entries tell.
func FromEntries(entries []sessionlog.Entry) []Record {
	var out []Record
	for _, e := range entries {
		if e.Type != sessionlog.TypeLedger || len(e.Ledger) == 0 {
			continue
		}
		var r Record
		if json.Unmarshal(e.Ledger, &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// Legacy builds records from the usage entries of a log that has no
// ledger entries: tiers, output and dollars are the provider's figures,
// the split by kind is unknown (no Kinds), no reasons.
func Legacy(entries []sessionlog.Entry, model string, price func(string) (llm.Price, bool)) []Record {
	var out []Record
	turn := 0
	for _, e := range entries {
		if e.Type == sessionlog.TypeMeta && e.Meta != nil && e.Meta.Model != "" {
			model = e.Meta.Model
		}
		if e.Type == sessionlog.TypeMessage && e.Agent == "" && e.Message != nil && e.Message.Role == llm.RoleUser && isPrompt(*e.Message) {
			turn++
		}
		if e.Type != sessionlog.TypeUsage || e.Usage == nil {
			continue
		}
		u := *e.Usage
		p, known := llm.Price{}, false
		if price != nil {
			p, known = price(model)
		}
		in := u
		in.Output, in.Reasoning = 0, 0
		r := Record{Time: e.Time, Turn: turn, Agent: e.Agent, Purpose: PurposeStep, Model: model,
			Tiers: Tiers{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Uncached: u.Input}, Output: u.Output, Reasoning: u.Reasoning,
			InputUSD: p.Cost(in), OutputUSD: p.Cost(llm.Usage{Output: u.Output}), PriceKnown: known}
		r.InputTotal = r.Tiers.Total()
		r.USD = r.InputUSD + r.OutputUSD
		if e.Text == sessionlog.UsageCompact {
			r.Purpose = PurposeCompact
		}
		out = append(out, r)
	}
	return out
}

func isPrompt(m llm.Message) bool {
	for _, b := range m.Blocks {
		if b.Type == llm.BlockToolResult {
			return false
		}
	}
	return true
}

// Write renders s as text for a person: the totals, the tiers, the kinds
// (labelled estimated) and the reasons. title heads it.
func Write(w io.Writer, title string, s Summary) {
	dollars := func(v float64) string {
		if !s.PriceKnown {
			return "price unknown"
		}
		return USD(v)
	}
	fmt.Fprintf(w, "%s: %s, %s in (%s), %s out", title, plural(s.Requests, "request"), Count(s.InputTotal), dollars(s.InputUSD), Count(s.Output))
	if s.Reasoning > 0 {
		fmt.Fprintf(w, " (%s reasoning)", Count(s.Reasoning))
	}
	fmt.Fprintf(w, " (%s); total %s\n", dollars(s.OutputUSD), dollars(s.USD))
	if s.Requests == 0 {
		return
	}
	t := s.Tiers
	fmt.Fprintf(w, "  by cache tier (reported): cache read %s · cache write %s · uncached %s\n", tierPart(t.CacheRead, s.InputTotal), tierPart(t.CacheWrite, s.InputTotal), tierPart(t.Uncached, s.InputTotal))
	if len(s.Kinds) > 0 {
		fmt.Fprintf(w, "  by kind (estimated, scaled to the reported total):\n")
		for _, k := range Kinds {
			p, ok := s.Kinds[k]
			if !ok || p.Tokens == 0 {
				continue
			}
			line := fmt.Sprintf("    %-13s %8s %4d%%", k, Count(p.Tokens), percent(p.Tokens, s.InputTotal))
			if s.PriceKnown {
				line += "  " + USD(p.USD)
			}
			fmt.Fprintf(w, "%s  (read %s, write %s, uncached %s)\n", line, Count(p.CacheRead), Count(p.CacheWrite), Count(p.Uncached))
		}
	} else {
		fmt.Fprintf(w, "  by kind: not recorded (this session predates the ledger)\n")
	}
	if s.CompactionUSD > 0 {
		fmt.Fprintf(w, "  compactions cost %s\n", dollars(s.CompactionUSD))
	}
	if len(s.Reasons) > 0 {
		fmt.Fprintf(w, "  why it cost what it did:\n")
		for i, why := range s.Reasons {
			if i == 8 {
				fmt.Fprintf(w, "    … and %d more\n", len(s.Reasons)-i)
				break
			}
			cost := ""
			if s.PriceKnown && why.USD > 0 {
				cost = " [" + USD(why.USD) + "]"
			}
			turn := ""
			if why.Turn > 0 && s.Turns > 1 {
				turn = fmt.Sprintf("turn %d: ", why.Turn)
			}
			fmt.Fprintf(w, "    - %s%s%s\n", turn, why.Text, cost)
		}
	}
}

// WriteSession renders a session's ledger: the whole, then each turn.
func WriteSession(w io.Writer, rs []Record) {
	Write(w, "session", Summarize(rs))
	var turns []int
	seen := map[int]bool{}
	for _, r := range rs {
		if !seen[r.Turn] {
			seen[r.Turn] = true
			turns = append(turns, r.Turn)
		}
	}
	for _, n := range turns {
		var in []Record
		for _, r := range rs {
			if r.Turn == n {
				in = append(in, r)
			}
		}
		fmt.Fprintln(w)
		Write(w, fmt.Sprintf("turn %d", n), Summarize(in))
	}
}

func tierPart(n, total int) string {
	return fmt.Sprintf("%s (%d%%)", Count(n), percent(n, total))
}

// Count formats a token count: 950, 4.5k, 45k, 1.2M.
func Count(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// USD formats dollars: four decimals below a dollar.
func USD(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Short is the turn's costliest reason in a few words, for a status line
// ("" when none).
func (s Summary) Short() string {
	if len(s.Reasons) == 0 {
		return ""
	}
	return strings.ReplaceAll(s.Reasons[0].Cause, "_", " ")
}
