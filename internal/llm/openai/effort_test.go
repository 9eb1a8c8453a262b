package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
)

// EFFORT reaches OpenAI-format servers as reasoning_effort only where the
// model takes it; a level the model refuses (OpenAI's 400
// unsupported_value) is learned away once, with a notice, and the request
// still goes through.
func TestReasoningEffort(t *testing.T) {
	tests := []struct {
		name, base, profile, model string
		thinking                   llm.Thinking
		want                       string // reasoning_effort in the first body ("" none)
		requests, notices          int
	}{
		{"gpt-5 takes it", "", "openai", "gpt-5", llm.Thinking{Effort: "high"}, `"reasoning_effort":"high"`, 1, 0},
		{"o3 behind a gateway", "", "", "o3", llm.Thinking{Effort: "low"}, `"reasoning_effort":"low"`, 1, 0},
		{"max is OpenAI's xhigh", "", "openai", "gpt-5.2", llm.Thinking{Effort: "max"}, `"reasoning_effort":"xhigh"`, 1, 0},
		{"OpenRouter takes max", "", "openrouter", "openai/gpt-5", llm.Thinking{Effort: "max"}, `"reasoning_effort":"max"`, 1, 0},
		{"not a reasoning model", "", "openai", "gpt-4.1", llm.Thinking{Effort: "high"}, "", 1, 0},
		{"a local model", "", "llamacpp", "qwen3-coder", llm.Thinking{Effort: "high"}, "", 1, 0},
		{"no EFFORT", "", "openai", "gpt-5", llm.Thinking{}, "", 1, 0},
		{"THINKING off sends none", "", "openai", "gpt-5", llm.Thinking{Mode: llm.ThinkingOff, Effort: "high"}, "", 1, 0},
		{"a level the model refuses is learned away", "", "openai", "o3", llm.Thinking{Effort: "xhigh"}, `"reasoning_effort":"xhigh"`, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			if tt.requests > 1 {
				// o3's levels: low, medium, high.
				srv.SetModes(llmtest.OpenAIEffortLevels)
			}
			srv.Enqueue(llmtest.Reply{Text: "done", Usage: llm.Usage{Input: 10, Output: 300, Reasoning: 256}})
			p, err := openai.NewChecked(openai.Config{BaseURL: srv.URL, Profile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			var notices []string
			rep, err := p.Stream(context.Background(), &llm.Request{Model: tt.model, MaxTokens: 1000, Thinking: tt.thinking,
				Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}, func(e llm.Event) {
				if e.Type == llm.EventNotice {
					notices = append(notices, e.Text)
				}
			})
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.requests || len(notices) != tt.notices {
				t.Fatalf("%d requests, notices %q; want %d and %d", len(reqs), notices, tt.requests, tt.notices)
			}
			first, last := string(reqs[0].Body), string(reqs[len(reqs)-1].Body)
			if tt.want == "" && strings.Contains(first, "reasoning_effort") {
				t.Errorf("body sends reasoning_effort:\n%s", first)
			}
			if tt.want != "" && !strings.Contains(first, tt.want) {
				t.Errorf("body lacks %s:\n%s", tt.want, first)
			}
			if tt.requests > 1 && strings.Contains(last, "reasoning_effort") {
				t.Errorf("retry still sends reasoning_effort:\n%s", last)
			}
			// Reasoning tokens come back in usage, inside the output
			// they are billed as.
			if rep.Usage.Reasoning != 256 || rep.Usage.Output != 300 {
				t.Errorf("usage %+v, want 256 reasoning of 300 output", rep.Usage)
			}
		})
	}
}
