package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestHandEditNotUndone (#45): the user edits u.txt by hand while the
// agent's command writes c.txt. The sandbox saw what the command wrote,
// so `harness undo` takes back c.txt and leaves the user's edit alone,
// and the session named the edit as someone else's. On the code before
// (a before/after scan alone) the edit was journaled as the command's and
// undo reverted it. Both launcher backends.
func TestHandEditNotUndone(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			e := newCrashEnv(t, "anthropic")
			e.env = append(e.env, "SANDBOX="+backend)
			u := filepath.Join(e.proj, "u.txt")
			if err := os.WriteFile(u, []byte("the user's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "bash",
				Input: `{"command":"echo C > c.txt; while [ ! -e ready ]; do sleep 0.05; done"}`}}}, llmtest.Reply{Text: "done"})
			h, lines := e.start(t, "run", "--project", e.proj, "--yolo", "--output-format", "stream-json", "make c")
			waitFor(t, "the command to write c.txt", func() bool {
				_, err := os.Stat(filepath.Join(e.proj, "c.txt"))
				return err == nil
			})
			// By hand, on the host, while the command runs.
			if err := os.WriteFile(u, []byte("the user's edit\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(e.proj, "ready"), nil, 0o644)
			var session string
			named := false
			var all []string
			for line := range lines {
				all = append(all, line)
				var ev struct {
					SessionID string `json:"session_id"`
					Type      string `json:"type"`
					Text      string `json:"text"`
				}
				if json.Unmarshal([]byte(line), &ev) == nil && ev.SessionID != "" && session == "" {
					session = ev.SessionID
				}
				if ev.Type == "notice" && strings.Contains(ev.Text, "someone else") && strings.Contains(ev.Text, "u.txt") {
					named = true
				}
			}
			if err := h.Wait(); err != nil {
				t.Fatalf("harness run: %v", err)
			}
			if !named {
				t.Errorf("the user's edit was not named:\n%s", strings.Join(all, "\n"))
			}
			cmd := exec.Command(harnessBinary(t), "undo", "--project", e.proj, "--session", session)
			cmd.Env, cmd.Dir = e.env, e.proj
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("harness undo: %v\n%s", err, out)
			}
			if _, err := os.Stat(filepath.Join(e.proj, "c.txt")); err == nil {
				t.Errorf("undo left the command's c.txt:\n%s", out)
			}
			if b, _ := os.ReadFile(u); string(b) != "the user's edit\n" {
				t.Errorf("undo changed the user's edit to %q:\n%s", b, out)
			}
		})
	}
}
