package llm

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/jsonerr"
)

// Model is what harness knows of one model: its window, its longest reply,
// its list price and whether it reasons. Zero means unknown for the sizes;
// a nil Price means the price is unknown, never zero.
type Model struct {
	Name          string
	Aliases       []string
	Provider      string
	ContextWindow int
	MaxOutput     int
	Reasoning     bool
	// Images says the model takes image input (vision), so a pasted
	// screenshot or read_file of an image reaches it as an image block.
	Images bool
	Price  *Price
	// Family makes the entry match every model whose name starts with
	// Name and a dash ("gemini-3-flash" covers "gemini-3-flash-preview").
	// Without it only the name itself and its dated snapshots match.
	Family bool
	Source string // where the facts come from
	// Default marks the model harness uses for its provider's public API
	// when MODEL is not set.
	Default bool
}

// wirePrice is a Price as catalogue files spell it (lower-case keys).
type wirePrice struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// wireModel is a Model as catalogue files spell it.
type wireModel struct {
	Name          string     `json:"name"`
	Aliases       []string   `json:"aliases,omitempty"`
	Provider      string     `json:"provider,omitempty"`
	ContextWindow int        `json:"context_window,omitempty"`
	MaxOutput     int        `json:"max_output,omitempty"`
	Reasoning     bool       `json:"reasoning,omitempty"`
	Images        bool       `json:"images,omitempty"`
	Price         *wirePrice `json:"price,omitempty"`
	Family        bool       `json:"family,omitempty"`
	Source        string     `json:"source,omitempty"`
	Default       bool       `json:"default,omitempty"`
}

type wireCatalogue struct {
	Checked string      `json:"checked,omitempty"`
	Note    string      `json:"note,omitempty"`
	Models  []wireModel `json:"models"`
}

// Catalogue is a set of models matched by name. The zero value is empty;
// DefaultCatalogue is the one built into harness.
type Catalogue struct {
	Checked string // when the entries were compiled from their sources
	Note    string
	Models  []Model
}

//go:embed catalogue.json
var builtinCatalogue []byte

var (
	defaultOnce sync.Once
	defaultCat  *Catalogue
)

// DefaultCatalogue is the catalogue embedded in the binary (catalogue.json
// in this package). It is parsed once; callers must not modify it.
func DefaultCatalogue() *Catalogue {
	defaultOnce.Do(func() {
		c, err := ParseCatalogue(strings.NewReader(string(builtinCatalogue)))
		if err != nil {
			panic("llm: the built-in catalogue does not parse: " + err.Error())
		}
		defaultCat = c
	})
	return defaultCat
}

// DefaultModel is the model marked default for provider, or "".
func (c *Catalogue) DefaultModel(provider string) string {
	for _, m := range c.Models {
		if m.Default && m.Provider == provider {
			return m.Name
		}
	}
	return ""
}

// maxCatalogue bounds a catalogue file.
const maxCatalogue = 16 << 20

// ParseCatalogue reads a catalogue in the format of catalogue.json; an
// error says its line and column.
func ParseCatalogue(r io.Reader) (*Catalogue, error) {
	var w wireCatalogue
	data, err := io.ReadAll(io.LimitReader(r, maxCatalogue+1))
	if err != nil {
		return nil, fmt.Errorf("model catalogue: %w", err)
	}
	if len(data) > maxCatalogue {
		return nil, fmt.Errorf("model catalogue: larger than %d MiB", maxCatalogue>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("model catalogue: %w", jsonerr.At(data, err))
	}
	c := &Catalogue{Checked: w.Checked, Note: w.Note}
	for i, wm := range w.Models {
		if strings.TrimSpace(wm.Name) == "" {
			return nil, fmt.Errorf("model catalogue: entry %d has no name", i+1)
		}
		m := Model{Name: wm.Name, Aliases: wm.Aliases, Provider: wm.Provider, ContextWindow: wm.ContextWindow,
			MaxOutput: wm.MaxOutput, Reasoning: wm.Reasoning, Images: wm.Images, Family: wm.Family, Source: wm.Source, Default: wm.Default}
		if p := wm.Price; p != nil {
			if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
				return nil, fmt.Errorf("model catalogue: %s has a negative price", wm.Name)
			}
			m.Price = &Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
		}
		if m.ContextWindow < 0 || m.MaxOutput < 0 {
			return nil, fmt.Errorf("model catalogue: %s has a negative size", wm.Name)
		}
		c.Models = append(c.Models, m)
	}
	return c, nil
}

// LookupModel finds model in the built-in catalogue.
func LookupModel(name string) (Model, bool) { return DefaultCatalogue().Lookup(name) }

// Merge returns c with over's entries laid on top: an entry of over whose
// name c has replaces the fields it sets (a price replaces the whole
// price); any other entry is added, ahead of c's, so it wins a lookup.
func (c *Catalogue) Merge(over *Catalogue) *Catalogue {
	out := &Catalogue{Checked: c.Checked, Note: c.Note, Models: append([]Model(nil), c.Models...)}
	var added []Model
	for _, o := range over.Models {
		i := slices.IndexFunc(out.Models, func(m Model) bool { return Normalize(m.Name) == Normalize(o.Name) })
		if i < 0 {
			added = append(added, o)
			continue
		}
		m := &out.Models[i]
		if o.Provider != "" {
			m.Provider = o.Provider
		}
		if o.ContextWindow > 0 {
			m.ContextWindow = o.ContextWindow
		}
		if o.MaxOutput > 0 {
			m.MaxOutput = o.MaxOutput
		}
		if o.Price != nil {
			m.Price = o.Price
		}
		m.Reasoning = m.Reasoning || o.Reasoning
		m.Images = m.Images || o.Images
		m.Family = m.Family || o.Family
		m.Aliases = append(m.Aliases, o.Aliases...)
		if o.Source != "" {
			m.Source = o.Source
		}
	}
	out.Models = append(added, out.Models...)
	return out
}

// snapshot matches what providers append to a model name for a dated or
// pinned version: -20250929, -2024-08-06, @20250929, -v1:0, -latest, -001.
var snapshot = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-@](\d{8}|\d{4}-\d{2}-\d{2}|\d{3}|latest|v\d+(:\d+)?)$`)
})

// Normalize is the form names are compared in: lower case, without a
// router's "vendor/" prefix, Anthropic's dotted aliases ("claude-opus-4.7")
// dashed, and Claude Code's "[1m]" window tag dropped.
func Normalize(name string) string {
	m := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimSuffix(m, "[1m]")
	if strings.HasPrefix(m, "claude-") {
		m = strings.ReplaceAll(m, ".", "-")
	}
	return m
}

// Lookup returns the entry for name: an exact name or alias first, then a
// dated snapshot of one, then the longest family entry that covers it. A
// prefix alone never matches ("claude-opus-4" does not price
// "claude-opus-4-7"): a newer model of a family often costs something else.
func (c *Catalogue) Lookup(name string) (Model, bool) {
	n := Normalize(name)
	if n == "" {
		return Model{}, false
	}
	names := func(m Model) []string { return append([]string{Normalize(m.Name)}, normAll(m.Aliases)...) }
	for _, m := range c.Models {
		for _, k := range names(m) {
			if n == k {
				return m, true
			}
		}
	}
	for _, m := range c.Models {
		for _, k := range names(m) {
			if strings.HasPrefix(n, k) && snapshot().MatchString(n[len(k):]) {
				return m, true
			}
		}
	}
	best, bestLen := -1, 0
	for i, m := range c.Models {
		k := Normalize(m.Name)
		if m.Family && strings.HasPrefix(n, k+"-") && len(k) > bestLen {
			best, bestLen = i, len(k)
		}
	}
	if best >= 0 {
		return c.Models[best], true
	}
	return Model{}, false
}

func normAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Normalize(s)
	}
	return out
}

// Sorted returns the catalogue's models by provider, then name.
func (c *Catalogue) Sorted() []Model {
	out := append([]Model(nil), c.Models...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Name < out[j].Name
	})
	return out
}
