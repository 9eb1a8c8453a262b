package pricing

import (
	"strings"

	"github.com/harness-dev/harness/internal/llm"
)

// Override replaces parts of a model's price; a nil field keeps the table's
// value. Values are dollars per million tokens.
type Override struct {
	Input, Output, CacheRead, CacheWrite *float64
}

// Set reports whether any field is overridden.
func (o Override) Set() bool {
	return o.Input != nil || o.Output != nil || o.CacheRead != nil || o.CacheWrite != nil
}

// entry prices a family of models by name prefix; the longest matching
// prefix wins, so "gpt-4o-mini" is not priced as "gpt-4o".
type entry struct {
	prefix string
	price  llm.Price
}

// table holds list prices in dollars per million tokens. Anthropic cache
// writes are the 5-minute kind (1.25 × input), reads 0.1 × input. OpenAI
// has no write premium: a cached prompt is billed as input the first time.
var table = []entry{
	{"claude-opus-4-6", llm.Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}},
	{"claude-opus-4-5", llm.Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}},
	{"claude-opus-4", llm.Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}},
	{"claude-sonnet-4", llm.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
	{"claude-haiku-4", llm.Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
	{"gpt-4o-mini", llm.Price{Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15}},
	{"gpt-4o", llm.Price{Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 2.5}},
	{"gpt-4.1-nano", llm.Price{Input: 0.1, Output: 0.4, CacheRead: 0.025, CacheWrite: 0.1}},
	{"gpt-4.1-mini", llm.Price{Input: 0.4, Output: 1.6, CacheRead: 0.1, CacheWrite: 0.4}},
	{"gpt-4.1", llm.Price{Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2}},
	{"gpt-5-nano", llm.Price{Input: 0.05, Output: 0.4, CacheRead: 0.005, CacheWrite: 0.05}},
	{"gpt-5-mini", llm.Price{Input: 0.25, Output: 2, CacheRead: 0.025, CacheWrite: 0.25}},
	{"gpt-5", llm.Price{Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25}},
}

// Lookup returns the list price of model and whether the table knows it.
// Names are matched case-insensitively after dropping a router prefix
// ("anthropic/", "openai/"), and Anthropic's dotted aliases
// ("claude-sonnet-4.5") match their dashed names.
func Lookup(model string) (llm.Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-")
	}
	best := -1
	for i, e := range table {
		if strings.HasPrefix(m, e.prefix) && (best < 0 || len(e.prefix) > len(table[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return llm.Price{}, false
	}
	return table[best].price, true
}

// For returns model's price with o applied, and whether the result is
// known: a table hit, or an override of at least the input and output
// prices (an override alone makes an unknown model priced).
func For(model string, o Override) (llm.Price, bool) {
	p, known := Lookup(model)
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.Input, o.Input)
	set(&p.Output, o.Output)
	set(&p.CacheRead, o.CacheRead)
	set(&p.CacheWrite, o.CacheWrite)
	if !known && o.Input != nil && o.Output != nil {
		known = true
	}
	return p, known
}
