package pricing

import (
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		model string
		known bool
		input float64
	}{
		{"claude-sonnet-4-5-20250929", true, 3},
		{"claude-sonnet-4.5", true, 3},
		{"anthropic/claude-opus-4-1", true, 15},
		{"claude-opus-4-5", true, 5},
		// Opus 4.7 and 4.8 cost a third of Opus 4: a prefix must not
		// give them its price.
		{"claude-opus-4-7", true, 5},
		{"claude-opus-4.8", true, 5},
		{"anthropic/claude-opus-4.7", true, 5},
		{"claude-opus-4-9", false, 0},
		{"claude-opus-4", true, 15},
		{"claude-opus-4-0", true, 15},
		{"claude-haiku-4-5-20251001", true, 1},
		{"claude-sonnet-4-5@20250929", true, 3},
		{"claude-sonnet-4-6[1m]", true, 3},
		{"claude-opus-5-5", true, 4},
		// Tiered or incompletely published prices are unknown, not guessed.
		{"claude-haiku-5-5", false, 0},
		{"gemini-2.5-pro", false, 0},
		{"gemini-3-flash-preview", true, 0.5},
		{"deepseek-v4-flash", true, 0.14},
		{"gpt-5.4-mini", true, 0.75},
		{"gpt-5-2025-08-07", true, 1.25},
		{"gpt-5-codex", false, 0},
		{"Claude-Haiku-4-5", true, 1},
		{"gpt-4o", true, 2.5},
		{"gpt-4o-mini-2024-07-18", true, 0.15},
		{"gpt-4o-2024-08-06", true, 2.5},
		{"gpt-4.1-mini", true, 0.4},
		{"gpt-4.1", true, 2},
		{"openai/gpt-5-mini", true, 0.25},
		{"gpt-5", true, 1.25},
		{"llama3.1:8b", false, 0},
		{"", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, known := Lookup(tt.model)
			if known != tt.known || p.Input != tt.input {
				t.Errorf("Lookup(%q) = %+v, %v; want input %v, known %v", tt.model, p, known, tt.input, tt.known)
			}
		})
	}
}

func TestFor(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		model string
		o     Override
		want  llm.Price
		known bool
	}{
		{"table", "claude-haiku-4-5", Override{}, llm.Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"partial override", "claude-haiku-4-5", Override{Output: f(4)}, llm.Price{Input: 1, Output: 4, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"unknown stays unknown", "qwen", Override{CacheRead: f(1)}, llm.Price{CacheRead: 1}, false},
		{"unknown priced by override", "qwen", Override{Input: f(0.2), Output: f(0.6)}, llm.Price{Input: 0.2, Output: 0.6}, true},
		{"zero override is a price", "gpt-4o", Override{Input: f(0), Output: f(0)}, llm.Price{CacheRead: 1.25, CacheWrite: 2.5}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, known := For(tt.model, tt.o)
			if p != tt.want || known != tt.known {
				t.Errorf("For = %+v, %v; want %+v, %v", p, known, tt.want, tt.known)
			}
		})
	}
}

func TestCostOfATypicalTurn(t *testing.T) {
	p, _ := Lookup("claude-sonnet-4-5")
	u := llm.Usage{Input: 1000, CacheRead: 100000, CacheWrite: 2000, Output: 500}
	// 1000*3 + 100000*0.3 + 2000*3.75 + 500*15 = 3000+30000+7500+7500 = 48000 / 1e6
	if got := p.Cost(u); got < 0.04799 || got > 0.04801 {
		t.Errorf("cost = %v, want 0.048", got)
	}
}
