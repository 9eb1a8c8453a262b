package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/testenv"
)

// agentText is the agent_message_chunk text of us.
func agentText(us []map[string]any) string {
	var text string
	for _, u := range ofKind(us, "agent_message_chunk") {
		text += fmt.Sprint(u["content"].(map[string]any)["text"])
	}
	return text
}

// TestACPBuiltinCommands: harness's own /compact and /undo are published
// with the session's commands and run in the editor as in the chat.
func TestACPBuiltinCommands(t *testing.T) {
	testenv.Slow(t)
	srv, proj := acpEnv(t)
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	u := c.waitUpdate("available_commands_update", 5*time.Second)
	names := map[string]bool{}
	for _, x := range u["availableCommands"].([]any) {
		names[fmt.Sprint(x.(map[string]any)["name"])] = true
	}
	if !names["compact"] || !names["undo"] {
		t.Fatalf("available commands %v", u["availableCommands"])
	}
	c.takeUpdates()

	if stop := prompt(c, sid, "/compact"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if got := agentText(c.takeUpdates()); got != "nothing to compact yet: the session has no messages" {
		t.Fatalf("/compact said %q", got)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("/compact went to the model: %d requests", n)
	}

	// An edit, then /undo sets the file back.
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: "write_file", Input: `{"path":"main.go","content":"package main\n// changed\n"}`}}}, llmtest.Reply{Text: "written"})
	c.setPermission(func(map[string]any) string { return "allow_once" })
	if stop := prompt(c, sid, "change it"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	c.takeUpdates()
	if stop := prompt(c, sid, "/undo"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	got := agentText(c.takeUpdates())
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); string(b) != "package main\n\nfunc main() {}\n" {
		t.Fatalf("after /undo (said %q) main.go holds %q", got, b)
	}
	if !strings.Contains(got, "main.go") {
		t.Errorf("/undo said %q", got)
	}
	if stop := prompt(c, sid, "/undo sideways"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if got := agentText(c.takeUpdates()); got != `/undo takes call or --force, not "sideways"` {
		t.Errorf("a bad /undo said %q", got)
	}
}

// TestACPFileMentions: a resource_link to a project file and an @path in
// the text reach the model as the file's content; a link to a secret does
// not.
func TestACPFileMentions(t *testing.T) {
	srv, proj := acpEnv(t)
	os.WriteFile(filepath.Join(proj, "notes.md"), []byte("LINKED-BODY-4411\n"), 0o644)
	os.MkdirAll(filepath.Join(proj, "docs"), 0o755)
	os.WriteFile(filepath.Join(proj, "docs", "plan.txt"), []byte("MENTIONED-BODY-9023\n"), 0o644)
	ssh := filepath.Join(os.Getenv("HOME"), ".ssh")
	os.MkdirAll(ssh, 0o700)
	os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("SECRET-KEY-0001\n"), 0o600)
	c := startACP(t, proj)
	sid := newACPSession(t, c, proj)
	srv.Enqueue(llmtest.Reply{Text: "seen"})
	var r struct {
		StopReason string `json:"stopReason"`
	}
	c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "compare @docs/plan.txt with"},
		map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(proj, "notes.md"), "name": "notes.md"},
		map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(ssh, "id_ed25519"), "name": "id_ed25519"},
	}}, &r)
	if r.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", r.StopReason)
	}
	reqs := srv.Requests()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(reqs[len(reqs)-1].Messages)
	b := buf.Bytes()
	for _, want := range []string{`<file path=\"notes.md\">\nLINKED-BODY-4411\n</file>`, `<file path=\"docs/plan.txt\">\nMENTIONED-BODY-9023\n</file>`, "[the user refers to " + ssh} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the model's prompt lacks %q: %s", want, b)
		}
	}
	if strings.Contains(string(b), "SECRET-KEY") {
		t.Errorf("a secret reached the model: %s", b)
	}
}
