package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// FuzzRender feeds arbitrary model and tool text to everything that draws
// it: nothing is recovered in the terminal loop, so a panic here would end
// the user's session. Rendered text must also carry no raw control bytes
// but the styles' own escapes. As a plain test it runs the seeds only.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# Title\n\n**bold** and `code`\n\n```go\nfunc main() {}\n```\n- a\n- b\n",
		"| a | b |\n|---|---|\n| 1 | 2 |\n", "```\nunclosed", "\x1b[2J\x1b]0;title\x07", "`", "**", "> quote\n---\n",
		"1\n[harness cap: 3 of 4 chars cut]\n[exit code: 2]", "\t\ttabs\r\nand crlf", "é漢字🙂\u200b",
	} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		if width < 0 {
			width = -width
		}
		width = width%200 + 1
		for _, st := range []Style{{}, {Color: true}} {
			out := RenderMarkdown(st, s, width)
			if !st.Color && strings.ContainsAny(out, "\x1b\x07") {
				t.Fatalf("raw control bytes in %q", out)
			}
			Highlight(st, "go", s)
			Highlight(st, "sh", s)
			in, _ := json.Marshal(map[string]string{"command": s, "path": s, "old_string": s, "new_string": s + "x"})
			call := llm.Block{Type: llm.BlockToolUse, Name: "edit_file", Input: in}
			ToolLine(st, call, width)
			ToolResult(st, call, llm.Block{Content: s, IsError: len(s)%2 == 0}, time.Second, width)
			Wrap(Sanitize(s), width)
			Truncate(s, width)
		}
	})
}
