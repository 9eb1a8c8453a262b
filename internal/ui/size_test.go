package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/tools"
)

// TestToolResultSize: the line count under a call is the tool's own, with
// the real formatting and capping in between: a command's 300 lines are
// "300 lines" whether or not the cap cut the middle, a partial read says
// how much of the file it is, and output the sandbox dropped is named.
func TestToolResultSize(t *testing.T) {
	lines := func(n, w int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", w))
		}
		return b.String()
	}
	bash := func(out string, dropped int) string {
		return tools.FormatBash(&sandbox.Result{Output: []byte(out), Truncated: dropped})
	}
	tests := []struct {
		name, tool, content, want string
	}{
		{"short output", "bash", bash(lines(300, 5), 0), "exit 0 · 300 lines ·"},
		{"capped output", "bash", bash(lines(300, 60), 0), "exit 0 · 300 lines · "},
		{"capped long output", "bash", bash(lines(5000, 5), 0), "exit 0 · 5000 lines · "},
		{"no newline at the end", "bash", bash(strings.TrimSuffix(lines(300, 60), "\n"), 0), "exit 0 · 300 lines · "},
		{"dropped by the sandbox", "bash", bash(lines(10, 5), 2_500_000), "exit 0 · 10 lines · 2.5 MB dropped in the middle ·"},
		{"partial read", "read_file", lines(188, 5) + "[lines 1-188 of 300; continue with offset=189]\n", "ok · 188 of 300 lines ·"},
		{"whole read", "read_file", lines(300, 5), "ok · 300 lines ·"},
		{"one-line answer", "write_file", "wrote a.txt (10 bytes, 2 lines)", "ok · 0.0s"},
		{"grep with more", "grep", lines(3, 1) + "\n[12 more matches not shown; narrow the pattern]", "ok · 3 lines ·"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history.New(history.Config{SpillDir: t.TempDir()})
			b := llm.Block{Type: llm.BlockToolResult, ToolUseID: "t1", Content: tt.content}
			if err := h.Cap(&b); err != nil {
				t.Fatal(err)
			}
			got := ToolResult(Style{}, llm.Block{Name: tt.tool}, b, 0, 100)
			head := strings.TrimPrefix(strings.SplitN(got, "\n", 2)[0], "  ↳ ")
			if !strings.HasPrefix(head, tt.want) {
				t.Errorf("summary %q, want it to start %q", head, tt.want)
			}
		})
	}
}
