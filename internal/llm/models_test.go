package llm

import "testing"

func TestAppendOnly(t *testing.T) {
	for _, tc := range []struct {
		model, base string
		preserved   bool
		appendOnly  bool
	}{
		{"claude-sonnet-5-5", "", true, true},
		{"claude-sonnet-5.5-20261101", "", true, true},
		{"anthropic/claude-fable-5-1", "", true, true},
		{"claude-opus-5-5", "", true, true},
		{"claude-sonnet-4-5", "", false, false},
		{"claude-opus-5", "", false, false},
		{"deepseek-chat", "", false, true},
		{"chat", "https://api.deepseek.com", false, true},
		{"gpt-5", "", false, false},
	} {
		if got := PreservedThinking(tc.model); got != tc.preserved {
			t.Errorf("PreservedThinking(%q) = %v", tc.model, got)
		}
		if got := AppendOnly(tc.model, tc.base); got != tc.appendOnly {
			t.Errorf("AppendOnly(%q, %q) = %v", tc.model, tc.base, got)
		}
	}
}
