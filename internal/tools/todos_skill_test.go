package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/skills"
)

func TestWriteTodos(t *testing.T) {
	list := &TodoList{}
	var recorded [][]Todo
	fail := false
	w := &WriteTodos{List: list, Record: func(items []Todo) error {
		if fail {
			return errors.New("disk full")
		}
		recorded = append(recorded, items)
		return nil
	}}
	r := NewRegistry(GateFunc(allowAll), w)

	tests := []struct {
		name, input string
		wantErr     string
		wantRender  string
	}{
		{"plan", `{"todos":[{"content":"Read the code","activeForm":"Reading the code","status":"in_progress"},{"content":"Fix it","activeForm":"Fixing it","status":"pending"}]}`,
			"", "1. [>] Reading the code\n2. [ ] Fix it"},
		{"two in progress", `{"todos":[{"content":"a","activeForm":"A","status":"in_progress"},{"content":"b","activeForm":"B","status":"in_progress"}]}`,
			"at most one may be in progress", "1. [>] Reading the code\n2. [ ] Fix it"},
		{"bad status", `{"todos":[{"content":"a","activeForm":"A","status":"doing"}]}`,
			`status "doing"; use pending, in_progress or completed`, "1. [>] Reading the code\n2. [ ] Fix it"},
		{"no content", `{"todos":[{"content":" ","activeForm":"A","status":"pending"}]}`,
			"todo 1 has no content", "1. [>] Reading the code\n2. [ ] Fix it"},
		{"missing todos", `{}`, `missing required argument "todos"`, "1. [>] Reading the code\n2. [ ] Fix it"},
		{"progress", `{"todos":[{"content":"Read the code","activeForm":"Reading the code","status":"completed"},{"content":"Fix it","activeForm":"Fixing it","status":"in_progress"}]}`,
			"", "1. [x] Read the code\n2. [>] Fixing it"},
		{"clear", `{"todos":[]}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(t.Context(), call("write_todos", tt.input))
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Content, tt.wantErr) {
					t.Fatalf("result = %+v, want error %q", res, tt.wantErr)
				}
			} else if res.IsError {
				t.Fatalf("unexpected error: %s", res.Content)
			}
			if got := list.Render(); got != tt.wantRender {
				t.Fatalf("Render = %q, want %q", got, tt.wantRender)
			}
		})
	}
	if len(recorded) != 3 {
		t.Fatalf("recorded %d lists, want 3 (only the valid ones)", len(recorded))
	}

	fail = true
	res := r.Run(t.Context(), call("write_todos", `{"todos":[{"content":"x","activeForm":"X","status":"pending"}]}`))
	if !res.IsError || !strings.Contains(res.Content, "disk full") || list.Render() != "" {
		t.Fatalf("a list that could not be logged must not take effect: %+v, list %q", res, list.Render())
	}
}

func TestTodoListRestore(t *testing.T) {
	items := []Todo{{Content: "a", ActiveForm: "doing a", Status: TodoCompleted}, {Content: "b", ActiveForm: "doing b", Status: TodoPending}}
	raw, _ := json.Marshal(items)
	var l TodoList
	if err := l.Restore(raw); err != nil {
		t.Fatal(err)
	}
	if got := l.Render(); got != "1. [x] a\n2. [ ] b" {
		t.Fatalf("Render = %q", got)
	}
	if err := l.Restore(json.RawMessage(`{"not":"a list"}`)); err == nil {
		t.Fatal("Restore accepted a non-list")
	}
	if err := l.Restore(nil); err != nil || l.Render() != "" {
		t.Fatalf("Restore(nil) = %v, list %q", err, l.Render())
	}
}

func TestReadSkill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "SKILL.md")
	const text = "---\nname: release\ndescription: d\n---\nDo the release.\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set := skills.NewSet(skills.Skill{Name: "release", Description: "d", Path: path}, skills.Skill{Name: "review", Description: "r", Path: path})
	r := NewRegistry(GateFunc(allowAll), &ReadSkill{Skills: set})
	tests := []struct {
		name, input, want string
		isErr             bool
	}{
		{"found", `{"name":"release"}`, text, false},
		{"unknown lists names", `{"name":"deploy"}`, `no skill named "deploy"; the skills that exist are: release, review`, true},
		{"missing name", `{}`, `missing required argument "name"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(t.Context(), call("read_skill", tt.input))
			if res.IsError != tt.isErr || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("result = %+v, want %q (error %v)", res, tt.want, tt.isErr)
			}
		})
	}
	empty := NewRegistry(GateFunc(allowAll), &ReadSkill{Skills: skills.NewSet()})
	if res := empty.Run(t.Context(), call("read_skill", `{"name":"x"}`)); !strings.Contains(res.Content, "this session has no skills") {
		t.Fatalf("empty set: %+v", res)
	}
}
