package app

import (
	"testing"

	"github.com/harness-dev/harness/internal/config"
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
