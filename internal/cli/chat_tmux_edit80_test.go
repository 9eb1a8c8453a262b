package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestChatTmuxEditPrompt80: at 80×24 the edit prompt keeps the changed
// lines in view, with the list of answers, on one screen.
func TestChatTmuxEditPrompt80(t *testing.T) {
	t.Parallel() // see tmuxParallel
	bin := tmuxHarness(t)
	srv := llmtest.NewServer(t)
	home, proj := t.TempDir(), t.TempDir()
	var src strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&src, "func step%d() { return compute(%d) } // the original line %d of the file\n", i, i, i)
	}
	os.WriteFile(filepath.Join(proj, "steps.go"), []byte(src.String()), 0o644)
	old := "func step30() { return compute(30) } // the original line 30 of the file\nfunc step31() { return compute(31) } // the original line 31 of the file\n"
	edit, _ := json.Marshal(map[string]string{"path": "steps.go", "old_string": old,
		"new_string": "func step30() { return computeFaster(30) } // CHANGED-30\nfunc step31() { return computeFaster(31) } // CHANGED-31\n"})
	srv.Enqueue(llmtest.Reply{Text: "I will make steps 30 and 31 faster, as asked, by calling the faster routine.",
		ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Input: string(edit)}}},
		llmtest.Reply{Text: "Done."})
	tm := startTmux(t, 80, 24, proj, tmuxEnv(home, srv.URL, "anthropic", "claude-sonnet-4-5"), bin, "--project", proj)
	tm.typeLine("make 30 and 31 faster")
	tm.waitFor("answer line", "↑↓ Enter picks")
	rows := tm.visible()
	screen := strings.Join(rows, "\n")
	t.Logf("the prompt at 80x24:\n%s", screen)
	for _, want := range []string{"CHANGED-30", "CHANGED-31", "the original line 30", "the original line 31", "╰ allow?", "yes, once", "no, and tell the model why"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the edit prompt at 80x24 does not show %q:\n%s", want, screen)
		}
	}
	checkFits(t, screen, 80)
	tm.answer("y")
	tm.waitFor("final text", "Done.")
	tm.keys("C-d")
	tm.waitExit()
}
