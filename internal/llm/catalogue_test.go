package llm_test

import (
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func TestLookupModel(t *testing.T) {
	tests := []struct {
		name   string
		want   string // entry name; "" for none
		window int
	}{
		{"claude-opus-4-7", "claude-opus-4-7", 1000000},
		{"Claude-Opus-4.7", "claude-opus-4-7", 1000000},
		{"anthropic/claude-opus-4.8", "claude-opus-4-8", 1000000},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5", 200000},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5", 200000},
		{"claude-opus-4", "claude-opus-4-0", 200000},      // alias
		{"claude-opus-4-9", "", 0},                        // a prefix is not a match
		{"claude-opus-4-7-fast", "", 0},                   // nor a variant
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 128000}, // not gpt-4o
		{"gemini-3-flash-preview", "gemini-3-flash", 1048576},
		{"google/gemini-3-pro-preview-11-2025", "gemini-3-pro", 1048576},
		{"gemini-3.1-pro-preview", "gemini-3.1-pro", 1048576}, // longest family
		{"deepseek-v4-pro", "deepseek-v4-pro", 1000000},
		{"deepseek-chat", "deepseek-chat", 1000000}, // now V4-Flash
		{"deepseek/deepseek-reasoner", "deepseek-reasoner", 1000000},
		{"gpt-5.4-2026-03-05", "gpt-5.4", 1050000},
		{"gpt-5.4-pro", "", 0}, // not gpt-5.4's price
		{"llama3.1:8b", "", 0},
		{"", "", 0},
	}
	for _, tt := range tests {
		m, ok := llm.LookupModel(tt.name)
		if ok != (tt.want != "") || m.Name != tt.want || m.ContextWindow != tt.window {
			t.Errorf("LookupModel(%q) = %q (window %d), %v; want %q (window %d)", tt.name, m.Name, m.ContextWindow, ok, tt.want, tt.window)
		}
	}
}

// Every built-in entry is complete enough to use: a price, when given, has
// an input and output rate, and names are unique after normalisation.
func TestBuiltinCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range llm.DefaultCatalogue().Models {
		n := llm.Normalize(m.Name)
		if seen[n] {
			t.Errorf("%s appears twice", m.Name)
		}
		seen[n] = true
		if m.Source == "" {
			t.Errorf("%s cites no source", m.Name)
		}
		if p := m.Price; p != nil && (p.Input <= 0 || p.Output <= 0) {
			t.Errorf("%s has an incomplete price %+v", m.Name, *p)
		}
	}
}

func TestCatalogueMerge(t *testing.T) {
	over, err := llm.ParseCatalogue(strings.NewReader(`{"models":[
		{"name":"claude-opus-4-7","context_window":200000},
		{"name":"qwen3-coder","family":true,"context_window":262144,"price":{"input":0.2,"output":0.8,"cache_read":0.02,"cache_write":0.2}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := llm.DefaultCatalogue().Merge(over)
	m, _ := c.Lookup("claude-opus-4-7")
	if m.ContextWindow != 200000 || m.Price == nil || m.Price.Input != 5 {
		t.Errorf("override of one field: %+v", m)
	}
	if m, ok := c.Lookup("qwen3-coder-30b"); !ok || m.Price.Output != 0.8 {
		t.Errorf("added family: %+v %v", m, ok)
	}
	if _, ok := llm.LookupModel("qwen3-coder-30b"); ok {
		t.Error("Merge changed the built-in catalogue")
	}
	for _, bad := range []string{`{"models":[{"name":""}]}`, `{"models":[{"name":"x","price":{"input":-1}}]}`, `{"modles":[]}`, `[`} {
		if _, err := llm.ParseCatalogue(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseCatalogue(%s) accepted", bad)
		}
	}
}

// Entries checked against the providers' pages this session (issue 35).
func TestCatalogueChecked(t *testing.T) {
	for _, tt := range []struct {
		name            string
		window, output  int
		priced, reasons bool
	}{
		{"claude-sonnet-4-6", 1000000, 128000, true, true},
		{"deepseek-chat", 1000000, 384000, true, false},
		{"deepseek-reasoner", 1000000, 384000, true, true},
		{"gpt-5.4", 1050000, 128000, true, true},
		{"gpt-5.4-mini", 0, 0, true, true}, // window not on a page we could check: unknown
	} {
		m, ok := llm.LookupModel(tt.name)
		if !ok || m.ContextWindow != tt.window || m.MaxOutput != tt.output || (m.Price != nil) != tt.priced || m.Reasoning != tt.reasons || m.Source == "" {
			t.Errorf("%s: %+v", tt.name, m)
		}
	}
}
