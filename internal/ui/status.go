package ui

import (
	"fmt"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
)

// Meter accounts a session's usage and cost for the status line and /cost.
// Its exported fields are set by the caller at start (and by /model); Add
// is called for every model reply. Safe for concurrent use.
type Meter struct {
	Model      string
	Window     int       // context window in tokens; 0 hides the fill
	Price      llm.Price // dollars per million tokens
	PriceKnown bool      // false shows "price unknown" instead of $0
	Backend    string    // sandbox backend in force

	mu      sync.Mutex
	context int // see SetContext
	// ledger: the session's dollars from the cost ledger (each request
	// at its own model's price) and the last turn's main cause, shown
	// instead of Price applied to the total once set.
	ledgerSet   bool
	ledgerUSD   float64
	ledgerKnown bool
	ledgerHint  string
	last        llm.Usage
	total       llm.Usage
	requests    int
}

// Add accounts one completed reply.
func (m *Meter) Add(r *llm.Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = r.Usage
	m.total = m.total.Add(r.Usage)
	m.requests++
	if m.Model == "" && r.Model != "" {
		m.Model = r.Model
	}
}

// Set replaces the accounting with the agent's own figures (after a turn,
// or when a session is resumed): last request, session total, requests.
func (m *Meter) Set(last, total llm.Usage, requests int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.total, m.requests = last, total, max(requests, m.requests)
}

// SetContext records the size of the next request as the context layers
// count it (the last usage plus what was added since, after any
// compaction); the status line shows it instead of the last request's
// usage, which a server may not report and a compaction makes stale.
func (m *Meter) SetContext(tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.context = tokens
}

// SetLedger sets the session's dollars from the cost ledger, whether
// every price was known, and the last turn's costliest cause ("" when
// none), which the status line points to /cost for.
func (m *Meter) SetLedger(usd float64, known bool, hint string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ledgerSet, m.ledgerUSD, m.ledgerKnown, m.ledgerHint = true, usd, known, hint
}

// Reset forgets the session's usage (a new session after /clear).
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.total, m.requests, m.context = llm.Usage{}, llm.Usage{}, 0, 0
	m.ledgerSet, m.ledgerUSD, m.ledgerHint = false, 0, ""
}

// Snapshot returns the last request's usage, the session total and the
// number of requests.
func (m *Meter) Snapshot() (last, total llm.Usage, requests int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.total, m.requests
}

// Frozen is a copy of m as it stands, for a status line drawn again
// later (after a resize) with the figures it showed.
func (m *Meter) Frozen() *Meter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &Meter{Model: m.Model, Window: m.Window, Price: m.Price, PriceKnown: m.PriceKnown, Backend: m.Backend,
		context: m.context, last: m.last, total: m.total, requests: m.requests,
		ledgerSet: m.ledgerSet, ledgerUSD: m.ledgerUSD, ledgerKnown: m.ledgerKnown, ledgerHint: m.ledgerHint}
}

// Cost is the session's cost so far in dollars.
func (m *Meter) Cost() float64 {
	_, total, _ := m.Snapshot()
	return m.Price.Cost(total)
}

// Fill is the context in use after the last reply: its prompt plus its
// output, which the next request carries.
func (m *Meter) Fill() int {
	last, _, _ := m.Snapshot()
	return last.Prompt() + last.Output
}

// StatusLine is the one line shown after each turn:
//
//	claude-sonnet-4-5 · ctx 45.2k/200k 23% · cache 92% · session 312k tok $0.42 · sandbox bwrap
func (m *Meter) StatusLine(st Style, width int) string {
	last, total, reqs := m.Snapshot()
	sep := st.Dim(" · ")
	var parts []string
	drop := map[int]bool{} // parts that give way, first to last, when the line is too wide
	var order []int
	if m.Model != "" {
		parts = append(parts, st.Bold(m.Model))
	}
	fill := last.Prompt() + last.Output
	m.mu.Lock()
	if m.context > 0 {
		fill = m.context
	}
	m.mu.Unlock()
	if reqs > 0 {
		if m.Window > 0 {
			pct := 100 * float64(fill) / float64(m.Window)
			parts = append(parts, fmt.Sprintf("ctx %s/%s %s", Tokens(fill), Tokens(m.Window), fillColour(st, pct)(fmt.Sprintf("%.0f%%", pct))))
		} else {
			parts = append(parts, "ctx "+Tokens(fill))
		}
		if p := last.Prompt(); p > 0 {
			order = append(order, len(parts))
			parts = append(parts, fmt.Sprintf("cache %.0f%%", 100*float64(last.CacheRead)/float64(p)))
		}
		sess := "session " + Tokens(total.Prompt()+total.Output) + " tok"
		m.mu.Lock()
		set, usd, known, hint := m.ledgerSet, m.ledgerUSD, m.ledgerKnown, m.ledgerHint
		m.mu.Unlock()
		switch {
		case set && known:
			sess += " " + formatDollars(usd)
		case !set && m.PriceKnown:
			sess += " " + formatDollars(m.Price.Cost(total))
		default:
			sess += " " + st.Dim("price unknown")
		}
		parts = append(parts, sess)
		if set && hint != "" {
			// Why the last turn cost more, and where to read about it.
			order = append(order, len(parts))
			parts = append(parts, st.Yellow(hint)+st.Dim(" (/cost)"))
		}
	}
	if m.Backend != "" {
		b := "sandbox " + m.Backend
		if m.Backend == "none" {
			b = st.Red(b) // a warning: it stays
		} else {
			order = append(order, len(parts))
		}
		parts = append(parts, b)
	}
	join := func() string {
		var kept []string
		for i, p := range parts {
			if !drop[i] {
				kept = append(kept, p)
			}
		}
		return st.Dim("─ ") + strings.Join(kept, sep)
	}
	line := join()
	for _, i := range order {
		if StringWidth(line) <= width {
			break
		}
		drop[i] = true
		line = join()
	}
	if StringWidth(line) > width {
		// Drop the styling and cut: a status line never wraps.
		return st.Dim(Truncate(StripANSI(line), width))
	}
	return line
}

// CostReport is the /cost view: the session's tokens by kind and dollars.
func (m *Meter) CostReport(st Style) string {
	last, total, reqs := m.Snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s, %s\n", st.Bold("session"), plural(reqs, "request"), m.Model)
	row := func(name string, n int, price float64) {
		cost := ""
		if m.PriceKnown {
			cost = formatDollars(float64(n) * price / 1e6)
		}
		fmt.Fprintf(&b, "  %-12s %9s  %s\n", name, Tokens(n), cost)
	}
	row("input", total.Input, m.Price.Input)
	row("cache read", total.CacheRead, m.Price.CacheRead)
	row("cache write", total.CacheWrite, m.Price.CacheWrite)
	row("output", total.Output, m.Price.Output)
	if total.Reasoning > 0 {
		// A breakdown of output, billed inside it: not added to the total.
		fmt.Fprintf(&b, "  %-12s %9s  %s\n", "  reasoning", Tokens(total.Reasoning), st.Dim("(part of output)"))
	}
	if m.PriceKnown {
		fmt.Fprintf(&b, "  %-12s %9s  %s\n", "total", Tokens(total.Prompt()+total.Output), st.Bold(formatDollars(m.Price.Cost(total))))
		fmt.Fprintf(&b, "  %s\n", st.Dim(fmt.Sprintf("prices per million tokens: input $%g, output $%g, cache read $%g, cache write $%g",
			m.Price.Input, m.Price.Output, m.Price.CacheRead, m.Price.CacheWrite)))
	} else {
		fmt.Fprintf(&b, "  %s\n", st.Dim("price unknown for this model: set PRICE_INPUT and PRICE_OUTPUT (dollars per million tokens) in ~/.agents/env"))
	}
	if p := total.Prompt(); p > 0 {
		fmt.Fprintf(&b, "  %s\n", st.Dim(fmt.Sprintf("%.0f%% of prompt tokens were read from the cache (last request: %.0f%%)",
			100*float64(total.CacheRead)/float64(p), 100*float64(last.CacheRead)/float64(max(1, last.Prompt())))))
	}
	return b.String()
}

func fillColour(st Style, pct float64) func(string) string {
	switch {
	case pct >= 85:
		return st.Red
	case pct >= 50:
		return st.Yellow
	}
	return st.Green
}

// Tokens formats a token count: 950, 4.5k, 45k, 1.2M (the ledger's
// reports and the screen write counts alike).
func Tokens(n int) string { return ledger.Count(n) }

func formatDollars(d float64) string {
	if d < 0.995 {
		return fmt.Sprintf("$%.3f", d)
	}
	return fmt.Sprintf("$%.2f", d)
}
