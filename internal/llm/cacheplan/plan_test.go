package cacheplan

import (
	"slices"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// TestRefsAreStoredBlocks: a plan names stored blocks, skipping what is
// not sent (blank text) and what cannot carry a marker (thinking), so an
// adapter maps them onto its own format.
func TestRefsAreStoredBlocks(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want Plan
	}{
		{"empty", &llm.Request{}, Plan{}},
		{"system", &llm.Request{System: "s", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}},
			Plan{System: true, Blocks: []Ref{{0, 0}}}},
		{"tools without system", &llm.Request{Tools: []llm.Tool{{Name: "bash"}}, Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}},
			Plan{Tool: true, Blocks: []Ref{{0, 0}}}},
		{"trailing blank and thinking fall back", &llm.Request{Messages: []llm.Message{
			llm.Text(llm.RoleUser, "hi"),
			{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockText, Text: "ok"}, {Type: llm.BlockThinking, Thinking: "t"}, {Type: llm.BlockText, Text: "  "}}},
		}}, Plan{Blocks: []Ref{{1, 0}}}},
		{"only blank text is one placeholder", &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: " "}, {Type: llm.BlockText, Text: ""}}},
		}}, Plan{Blocks: []Ref{{0, 0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of(tt.req)
			if got.Tool != tt.want.Tool || got.System != tt.want.System || !slices.Equal(got.Blocks, tt.want.Blocks) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
