package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Todo is one item of the plan. The JSON names are the tool's argument
// names and the session log's format.
type Todo struct {
	Content    string `json:"content"`
	ActiveForm string `json:"activeForm"`
	Status     string `json:"status"`
}

// TodoList is the session's plan. It lives outside the history (in the
// session log and the reminder), so stripping and compaction never lose it.
// It is safe for concurrent use.
type TodoList struct {
	mu    sync.Mutex
	items []Todo
}

// Items returns a copy of the list.
func (l *TodoList) Items() []Todo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Todo(nil), l.items...)
}

// Set replaces the list after checking it.
func (l *TodoList) Set(items []Todo) error {
	if err := ValidateTodos(items); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append([]Todo(nil), items...)
	return nil
}

// Restore sets the list from its logged JSON form (a TypeTodos entry); empty
// raw clears it.
func (l *TodoList) Restore(raw json.RawMessage) error {
	var items []Todo
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("the logged todo list is not valid: %w", err)
		}
	}
	return l.Set(items)
}

// Render is the list as the reminder shows it, one line per item; "" when
// the list is empty.
func (l *TodoList) Render() string {
	items := l.Items()
	var sb strings.Builder
	for i, t := range items {
		mark := "[ ]"
		text := t.Content
		switch t.Status {
		case TodoInProgress:
			mark = "[>]"
			if t.ActiveForm != "" {
				text = t.ActiveForm
			}
		case TodoCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(&sb, "%d. %s %s\n", i+1, mark, text)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// ValidateTodos checks a whole list: every item has content and a known
// status, and at most one is in progress.
func ValidateTodos(items []Todo) error {
	inProgress := 0
	for i, t := range items {
		if strings.TrimSpace(t.Content) == "" {
			return fmt.Errorf("todo %d has no content; give every item a short imperative description", i+1)
		}
		switch t.Status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			inProgress++
		default:
			return fmt.Errorf("todo %d (%q) has status %q; use pending, in_progress or completed", i+1, t.Content, t.Status)
		}
	}
	if inProgress > 1 {
		return fmt.Errorf("%d todos are in_progress; at most one may be in progress at a time: finish or reset the others first", inProgress)
	}
	return nil
}

// WriteTodos replaces the whole plan. Record, when set, persists the new
// list (the session log) before the call succeeds.
type WriteTodos struct {
	List   *TodoList
	Record func(items []Todo) error
}

type todosArgs struct {
	Todos []Todo `json:"todos"`
}

// Spec implements Tool.
func (w *WriteTodos) Spec() llm.Tool {
	return llm.Tool{
		Name: "write_todos",
		Description: "Replace the whole task plan. Use it for work with several steps: write the list at the start, mark " +
			"an item in_progress before working on it and completed as soon as it is done, and add items you discover. " +
			"At most one item may be in_progress. Each item has content (imperative: \"Run the tests\"), activeForm " +
			"(present continuous: \"Running the tests\") and status (pending, in_progress, completed). The current " +
			"plan is shown to you in <todos> each turn. Send an empty list to clear it. Skip it for one-step tasks.",
		Schema: json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array","description":"The complete new list, in order.","items":{"type":"object","properties":{"content":{"type":"string","description":"What to do, imperative."},"activeForm":{"type":"string","description":"The same in present continuous, shown while in progress."},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","activeForm","status"]}}},"required":["todos"]}`),
	}
}

// Access implements Tool: the plan touches no file and runs nothing.
func (w *WriteTodos) Access(input json.RawMessage) (Access, error) {
	var a todosArgs
	if err := decode(input, &a, "todos"); err != nil {
		return Access{}, err
	}
	return Access{Tool: "write_todos"}, nil
}

// Run implements Tool.
func (w *WriteTodos) Run(ctx context.Context, input json.RawMessage) Result {
	var a todosArgs
	if err := decode(input, &a, "todos"); err != nil {
		return Errorf("%v", err)
	}
	if err := ValidateTodos(a.Todos); err != nil {
		return Errorf("the plan was not changed: %v", err)
	}
	if w.Record != nil {
		if err := w.Record(a.Todos); err != nil {
			return Errorf("the plan could not be saved to the session log: %v", err)
		}
	}
	if err := w.List.Set(a.Todos); err != nil {
		return Errorf("the plan was not changed: %v", err)
	}
	if len(a.Todos) == 0 {
		return Result{Content: "The plan is now empty."}
	}
	done := 0
	for _, t := range a.Todos {
		if t.Status == TodoCompleted {
			done++
		}
	}
	return Result{Content: fmt.Sprintf("Plan updated: %d items, %d completed.\n%s", len(a.Todos), done, w.List.Render())}
}
