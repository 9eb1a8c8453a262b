package pricing

import (
	"github.com/harness-dev/harness/internal/llm"
)

// Override replaces parts of a model's price; a nil field keeps the
// catalogue's value. Values are dollars per million tokens.
type Override struct {
	Input, Output, CacheRead, CacheWrite *float64
}

// Set reports whether any field is overridden.
func (o Override) Set() bool {
	return o.Input != nil || o.Output != nil || o.CacheRead != nil || o.CacheWrite != nil
}

// Lookup returns the list price of model from the built-in catalogue and
// whether it is known.
func Lookup(model string) (llm.Price, bool) { return LookupIn(llm.DefaultCatalogue(), model) }

// LookupIn is Lookup in catalogue c.
func LookupIn(c *llm.Catalogue, model string) (llm.Price, bool) {
	m, ok := c.Lookup(model)
	if !ok || m.Price == nil {
		return llm.Price{}, false
	}
	return *m.Price, true
}

// For returns model's price with o applied, and whether the result is
// known: a catalogue price, or an override of at least the input and output
// prices (an override alone makes an unknown model priced).
func For(model string, o Override) (llm.Price, bool) { return ForIn(llm.DefaultCatalogue(), model, o) }

// ForIn is For in catalogue c.
func ForIn(c *llm.Catalogue, model string, o Override) (llm.Price, bool) {
	p, known := LookupIn(c, model)
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
