package cli

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestACPEditDiagnostics: the language server's errors after an edit reach
// the editor as the tool call's content, beside its diff (#46).
func TestACPEditDiagnostics(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("gopls"); err != nil {
		testenv.Missing(t, testenv.Gopls, "gopls is not on PATH (GOBIN=$HOME/go/bin go install golang.org/x/tools/gopls@v0.23.0)")
	}
	if name, why := detectedBackend(); name != "bwrap" {
		testenv.Missing(t, testenv.Bwrap, why)
	}
	srv, proj := acpEnv(t)
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	c.waitUpdate("available_commands_update", 5*time.Second)
	c.takeUpdates()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "edit_file", Input: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { var s string = 1; _ = s }"}`}}}, llmtest.Reply{Text: "edited"})
	c.setPermission(func(map[string]any) string { return "allow_once" })
	if stop := prompt(c, sid, "edit"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	var content string
	var diff bool
	for _, u := range ofKind(c.takeUpdates(), "tool_call_update") {
		cs, _ := u["content"].([]any)
		for _, x := range cs {
			m := x.(map[string]any)
			diff = diff || m["type"] == "diff"
			if m["type"] == "content" {
				content += fmt.Sprint(m["content"].(map[string]any)["text"])
			}
		}
	}
	want := "main.go:3:30: error: cannot use 1 (untyped int constant) as string value in variable declaration"
	if !diff || !strings.Contains(content, want) {
		t.Fatalf("diff %v, content %q; want %q", diff, content, want)
	}
}
