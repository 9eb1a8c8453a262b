package app

import (
	"context"
	"testing"

	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// The session's window comes from the catalogue unless the user set one.
func TestCatalogueWindow(t *testing.T) {
	known := "claude-sonnet-5-5"
	m, ok := llm.LookupModel(known)
	if !ok || m.ContextWindow <= 0 || m.ContextWindow == config.DefaultContextWindow {
		t.Fatalf("catalogue lacks a distinct window for %s: %+v", known, m)
	}
	tests := []struct {
		name  string
		model string
		set   int
		src   config.Source
		want  int
	}{
		{"catalogue model, nothing set", known, config.DefaultContextWindow, config.Source{}, m.ContextWindow},
		{"unknown model keeps the default", "no-such-model-xyz", config.DefaultContextWindow, config.Source{}, config.DefaultContextWindow},
		{"a different value set wins", known, 32000, config.Source{}, 32000},
		{"the default set by environment wins", known, config.DefaultContextWindow, config.Source{Env: map[string]string{"CONTEXT_WINDOW": "128000"}}, config.DefaultContextWindow},
		{"the default set by flag wins", known, config.DefaultContextWindow, config.Source{Flags: map[string]string{"CONTEXT_WINDOW": "128000"}}, config.DefaultContextWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Model: tt.model, ContextWindow: tt.set}
			catalogueWindow(cfg, tt.src)
			if cfg.ContextWindow != tt.want {
				t.Errorf("window = %d, want %d", cfg.ContextWindow, tt.want)
			}
		})
	}
}

// The session's history keeps MAX_TOKENS of the window free for the reply
// (Anthropic with thinking and DeepSeek count max_tokens against the
// window): the layers work on the rest, and a sub-agent's history, built
// from the session's configuration, works on the same.
func TestWindowReservesTheReply(t *testing.T) {
	for _, tc := range []struct {
		window, maxTokens string
		want              int
	}{
		{"128000", "16384", 128000 - 16384},
		{"40000", "30000", 20000}, // over half the window: half
	} {
		o := testOptions(t)
		o.Source.Env["CONTEXT_WINDOW"], o.Source.Env["MAX_TOKENS"] = tc.window, tc.maxTokens
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.History.Config().Window; got != tc.want {
			t.Errorf("CONTEXT_WINDOW %s, MAX_TOKENS %s: the layers work on %d tokens, want %d", tc.window, tc.maxTokens, got, tc.want)
		}
		if sub := history.New(s.History.Config()); sub.Config().Window != tc.want {
			t.Errorf("a sub-agent's history works on %d tokens, want %d", sub.Config().Window, tc.want)
		}
		s.Close()
	}
}
