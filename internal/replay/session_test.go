package replay

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// A harness session log replays with the system prompt and tools it was
// sent with, and each usage tied to the reply it measured (the loop logs
// usage just before the reply); a summarisation call's usage and a
// sub-agent's lines are left out.
func TestLoadSessionLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	lg, err := sessionlog.Create(path, sessionlog.Meta{ID: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.Tool{{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)}}
	user := llm.Text(llm.RoleUser, "hi")
	call := llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "c", Name: "bash", Input: json.RawMessage(`{}`)}}}
	result := llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "c", Content: "ok"}}}
	answer := llm.Text(llm.RoleAssistant, "done")
	sub := llm.Text(llm.RoleUser, "sub-agent prompt")
	for _, e := range []sessionlog.Entry{
		{Type: sessionlog.TypePrompt, System: "sys", Tools: tools},
		{Type: sessionlog.TypeMessage, Message: &user},
		{Type: sessionlog.TypeUsage, Usage: &llm.Usage{Input: 10}},
		{Type: sessionlog.TypeMessage, Message: &call},
		{Type: sessionlog.TypeMessage, Message: &sub, Agent: "task-1"},
		{Type: sessionlog.TypeMessage, Message: &result},
		{Type: sessionlog.TypeUsage, Usage: &llm.Usage{Input: 20}},
		{Type: sessionlog.TypeMessage, Message: &answer},
		{Type: sessionlog.TypeUsage, Usage: &llm.Usage{Input: 99}, Text: sessionlog.UsageCompact},
	} {
		if err := lg.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	lg.Close()
	trajs, err := Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	tr := trajs[0]
	if tr.System != "sys" || len(tr.Tools) != 1 || tr.Tools[0].Name != "bash" {
		t.Errorf("system %q tools %v", tr.System, tr.Tools)
	}
	if len(tr.Messages) != 4 {
		t.Fatalf("%d messages, want 4 (the sub-agent's left out)", len(tr.Messages))
	}
	want := map[int]llm.Usage{1: {Input: 10}, 3: {Input: 20}}
	if len(tr.Usage) != len(want) || tr.Usage[1] != want[1] || tr.Usage[3] != want[3] {
		t.Errorf("usage %v, want %v", tr.Usage, want)
	}
}
