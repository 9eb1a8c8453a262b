package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/permission"
)

// TestPlanAcceptedCarriesOn: a plan-mode turn is told it is planning and
// runs with the project read-only; accepting its plan leaves plan mode
// (the walls write again) and the next turn's prompt carries the plan.
func TestPlanAcceptedCarriesOn(t *testing.T) {
	srv, err := llmtest.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := testOptions(t)
	o.Source.Env["BASE_URL"] = srv.URL
	o.PermissionMode = "plan"
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Sandbox.Policy().ProjectReadOnly() {
		t.Fatal("plan mode did not make the project read-only")
	}
	srv.Enqueue(llmtest.Reply{Text: "PLAN: rename foo to bar in main.go"})
	res, err := s.Agent.Run(context.Background(), "plan the rename", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.AcceptPlan(res.Text, extend.ModeDefault)
	if s.Modes.Mode() != extend.ModeDefault || s.Sandbox.Policy().ProjectReadOnly() {
		t.Fatal("accepting the plan did not leave plan mode")
	}
	srv.Enqueue(llmtest.Reply{Text: "done"})
	if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := lastUser(t, reqs[0].Messages), lastUser(t, reqs[1].Messages)
	if !strings.Contains(first, "[harness: plan mode]") || !strings.Contains(first, "plan the rename") {
		t.Errorf("the planning turn was not told it plans: %s", first)
	}
	if !strings.Contains(second, "accepted your plan") || !strings.Contains(second, "PLAN: rename foo to bar in main.go") {
		t.Errorf("the next turn does not carry the accepted plan: %s", second)
	}
	if strings.Contains(second, "[harness: plan mode]") {
		t.Errorf("the next turn is still told it plans: %s", second)
	}
}

// lastUser is the JSON of the last message of a request.
func lastUser(t *testing.T, msgs any) string {
	t.Helper()
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		t.Fatalf("messages: %s", raw)
	}
	return string(list[len(list)-1])
}

// askYes is a permission prompter that says yes.
type askYes struct{ n int }

func (a *askYes) Prompt(context.Context, permission.Request, permission.Decision, string) (permission.Answer, error) {
	a.n++
	return permission.Answer{Choice: permission.Yes}, nil
}

// TestHookEvents: every event in the list fires with Claude Code's fields:
// SessionStart (source startup; its stdout goes with the first prompt),
// UserPromptSubmit, Notification before a permission prompt, SubagentStop
// when a task ends, PreCompact before /compact's summary (trigger manual,
// the focus as custom_instructions), Stop, and SessionEnd at close.
func TestHookEvents(t *testing.T) {
	srv, err := llmtest.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := testOptions(t)
	o.Source.Env["BASE_URL"] = srv.URL
	ask := &askYes{}
	o.Prompter = ask
	logf := filepath.Join(t.TempDir(), "events.log")
	hooks := map[string]any{}
	for _, ev := range extend.Events {
		cmd := "cat >> " + logf + "; echo >> " + logf
		if ev == extend.SessionStart {
			cmd += "; echo START-CONTEXT"
		}
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	data, _ := json.Marshal(map[string]any{"hooks": hooks})
	os.MkdirAll(filepath.Join(o.Source.Home, ".agents"), 0o755)
	if err := os.WriteFile(filepath.Join(o.Source.Home, ".agents", "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"touch asked-file"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "task", Input: `{"description":"look","prompt":"look around"}`}}},
		llmtest.Reply{Text: "sub-agent report"},
		llmtest.Reply{Text: "done: " + strings.Repeat("a long answer to make the chat worth compacting ", 60)},
		llmtest.Reply{Text: "## Goal\nsummary"},
	)
	if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Agent.Compact(context.Background(), "keep the names", nil); err != nil {
		t.Fatal(err)
	}
	s.SetEndReason("prompt_input_exit")
	s.Close()
	if ask.n != 1 {
		t.Errorf("%d permission prompts, want 1", ask.n)
	}
	raw, _ := os.ReadFile(logf)
	var got []string
	fields := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a hook read %q: %v", l, err)
		}
		ev, _ := m["hook_event_name"].(string)
		if m["session_id"] != s.ID {
			t.Errorf("%s: session_id %v", ev, m["session_id"])
		}
		got = append(got, ev)
		if _, ok := fields[ev]; !ok {
			fields[ev] = m
		}
	}
	for _, ev := range extend.Events {
		if fields[ev] == nil {
			t.Errorf("%s never fired; fired: %v", ev, got)
		}
	}
	for ev, want := range map[string]map[string]any{
		extend.SessionStart:     {"source": "startup"},
		extend.UserPromptSubmit: {"prompt": "go"},
		extend.Notification:     {"notification_type": "permission_prompt", "message": "harness needs your permission to use Bash"},
		extend.PreCompact:       {"trigger": "manual", "custom_instructions": "keep the names"},
		extend.SessionEnd:       {"reason": "prompt_input_exit"},
		extend.Stop:             {"stop_hook_active": false},
		extend.SubagentStop:     {"stop_hook_active": false},
	} {
		for k, v := range want {
			if fields[ev] != nil && fields[ev][k] != v {
				t.Errorf("%s: %s = %v, want %v", ev, k, fields[ev][k], v)
			}
		}
	}
	if first := lastUser(t, srv.Requests()[0].Messages); !strings.Contains(first, "START-CONTEXT") {
		t.Errorf("SessionStart's stdout is not with the first prompt: %s", first)
	}
}
