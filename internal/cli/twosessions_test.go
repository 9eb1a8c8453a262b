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

// TestTwoSessionsUndoOnlyTheirOwn: two headless runs on one project, as
// from two terminals. B's command runs while A's write_file lands; each
// session's undo then takes back its own change and only that. Before,
// B's scan took A's file for its command's and B's undo deleted it.
func TestTwoSessionsUndoOnlyTheirOwn(t *testing.T) {
	e := newCrashEnv(t, "anthropic")
	srvA := llmtest.NewServer(t)
	envA := make([]string, 0, len(e.env))
	for _, kv := range e.env {
		if strings.HasPrefix(kv, "BASE_URL=") {
			kv = "BASE_URL=" + srvA.URL
		}
		envA = append(envA, kv)
	}
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "b1", Name: "bash", Input: `{"command":"echo B > b.txt; sleep 5"}`}}}, llmtest.Reply{Text: "done"})
	srvA.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "a1", Name: "write_file", Input: `{"path":"a.txt","content":"A's work\n"}`}}}, llmtest.Reply{Text: "done"})

	b, lines := e.start(t, "run", "--project", e.proj, "--yolo", "--output-format", "stream-json", "make b")
	var sessionB string
	for line := range lines {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.SessionID != "" && sessionB == "" {
			sessionB = ev.SessionID
		}
		if strings.Contains(line, `"type":"tool_use"`) {
			break
		}
	}
	waitFor(t, "B's command to write b.txt", func() bool {
		_, err := os.Stat(filepath.Join(e.proj, "b.txt"))
		return err == nil
	})
	runA := exec.Command(harnessBinary(t), "run", "--project", e.proj, "--yolo", "--output-format", "json", "make a")
	runA.Env, runA.Dir = envA, e.proj
	out, err := runA.Output()
	if err != nil {
		t.Fatalf("session A: %v\n%s", err, out)
	}
	var resA struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &resA); err != nil || resA.SessionID == "" || sessionB == "" {
		t.Fatalf("session ids: A %q (%v), B %q", resA.SessionID, err, sessionB)
	}
	for range lines {
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("session B: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.proj, "a.txt")); err != nil {
		t.Fatalf("A's write_file did not land: %v", err)
	}

	undo := func(session string) string {
		t.Helper()
		cmd := exec.Command(harnessBinary(t), "undo", "--project", e.proj, "--session", session)
		cmd.Env, cmd.Dir = e.env, e.proj
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("harness undo --session %s: %v\n%s", session, err, out)
		}
		return string(out)
	}
	out2 := undo(sessionB)
	if _, err := os.Stat(filepath.Join(e.proj, "a.txt")); err != nil {
		t.Errorf("B's undo deleted session A's file:\n%s", out2)
	}
	if _, err := os.Stat(filepath.Join(e.proj, "b.txt")); err == nil {
		t.Errorf("B's undo left B's own file:\n%s", out2)
	}
	out2 = undo(resA.SessionID)
	if _, err := os.Stat(filepath.Join(e.proj, "a.txt")); err == nil {
		t.Errorf("A's undo left A's own file:\n%s", out2)
	}
}
