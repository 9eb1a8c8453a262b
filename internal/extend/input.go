package extend

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// claudeNames maps harness's tools to Claude Code's names, so a matcher
// written for Claude Code ("Bash", "Write|Edit") matches. Other names
// (mcp__server__tool) are the same in both.
var claudeNames = map[string]string{
	"bash":        "Bash",
	"read_file":   "Read",
	"write_file":  "Write",
	"edit_file":   "Edit",
	"glob":        "Glob",
	"grep":        "Grep",
	"task":        "Task",
	"write_todos": "TodoWrite",
	"read_skill":  "Skill",
}

// ToolName is Claude Code's name for a harness tool.
func ToolName(tool string) string {
	if n, ok := claudeNames[tool]; ok {
		return n
	}
	return tool
}

// fileTools take a path that Claude Code calls file_path.
var fileTools = map[string]bool{"read_file": true, "write_file": true, "edit_file": true}

// maxHookText bounds a tool result passed to a hook (the input travels
// through a command line when the hook runs inside the walls).
const maxHookText = 32 << 10

// claudeInput is the call's arguments as a Claude Code hook reads them:
// harness's fields, and for the file tools file_path (absolute).
func (h *Hooks) claudeInput(tool string, in json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(in) > 0 {
		_ = json.Unmarshal(in, &m)
	}
	if p, ok := m["path"].(string); ok && fileTools[tool] {
		if !filepath.IsAbs(p) {
			p = filepath.Join(h.o.Project, p)
		}
		m["file_path"] = p
	}
	return m
}

// HarnessInput is a hook's updatedInput in harness's form: file_path
// becomes path.
func HarnessInput(in json.RawMessage) json.RawMessage {
	m := map[string]any{}
	if json.Unmarshal(in, &m) != nil {
		return in
	}
	if p, ok := m["file_path"]; ok {
		if _, has := m["path"]; !has {
			m["path"] = p
		}
		delete(m, "file_path")
	}
	out, err := json.Marshal(m)
	if err != nil {
		return in
	}
	return out
}

// input is the JSON a hook reads on stdin, as Claude Code documents it:
// the common fields, then the event's own.
func (h *Hooks) input(ev Event) ([]byte, error) {
	m := map[string]any{
		"session_id":      h.o.SessionID,
		"cwd":             h.o.Project,
		"hook_event_name": ev.Name,
		"permission_mode": "default",
	}
	if h.o.Transcript != nil {
		m["transcript_path"] = h.o.Transcript()
	}
	if h.o.Mode != nil {
		m["permission_mode"] = h.o.Mode()
	}
	switch ev.Name {
	case PreToolUse, PostToolUse:
		m["tool_name"] = ToolName(ev.Tool)
		m["tool_input"] = h.claudeInput(ev.Tool, ev.Input)
		m["tool_use_id"] = ev.ToolUseID
		if ev.Name == PostToolUse && ev.Result != nil {
			text := ev.Result.Content
			if len(text) > maxHookText {
				text = text[:maxHookText/2] + "\n[… cut for the hook …]\n" + text[len(text)-maxHookText/2:]
			}
			resp := map[string]any{"content": text, "is_error": ev.Result.IsError, "success": !ev.Result.IsError}
			if ev.Tool == "bash" {
				resp["stdout"] = text
				resp["stderr"] = ""
				resp["interrupted"] = strings.Contains(text, "[the user interrupted the turn]") || strings.Contains(text, "[the user stopped this call (Esc)")
			}
			if p, ok := m["tool_input"].(map[string]any)["file_path"]; ok {
				resp["filePath"] = p
			}
			m["tool_response"] = resp
		}
	case UserPromptSubmit:
		m["prompt"] = ev.Prompt
	case Stop, SubagentStop:
		m["stop_hook_active"] = ev.Active
	case SessionStart:
		m["source"] = ev.Source
	case SessionEnd:
		m["reason"] = ev.Source
	case PreCompact:
		m["trigger"] = ev.Source
		m["custom_instructions"] = ev.Custom
	case Notification:
		m["message"] = ev.Message
		m["notification_type"] = ev.Source
	}
	return json.Marshal(m)
}
