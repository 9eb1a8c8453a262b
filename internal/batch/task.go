package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Task is one line of a task file.
type Task struct {
	ID        string   `json:"id"`
	Repo      string   `json:"repo"`              // a local path or a git URL
	Ref       string   `json:"ref,omitempty"`     // a branch, tag or commit; empty: the default branch
	Prompt    string   `json:"prompt"`            // what the agent is asked to do
	Setup     string   `json:"setup,omitempty"`   // sh -c, on the host, before the agent
	Check     string   `json:"check,omitempty"`   // sh -c, inside the walls, after the agent: exit 0 is solved
	Timeout   Duration `json:"timeout,omitempty"` // the agent's wall-clock limit; zero: the runner's default
	BudgetUSD float64  `json:"budget_usd,omitempty"`
}

// Duration is a time.Duration written as "90s" or "10m" in JSON (a bare
// number is seconds).
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return errors.New(`timeout must be a duration such as "10m" or a number of seconds`)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// validID keeps an id usable as a directory name and a branch name.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`) })

// TaskError is a task file that cannot be run; Line is 1-based.
type TaskError struct {
	Line int
	Err  error
}

func (e *TaskError) Error() string { return fmt.Sprintf("task file line %d: %v", e.Line, e.Err) }
func (e *TaskError) Unwrap() error { return e.Err }

// ReadTasks parses a JSONL task file: one object a line, blank lines and
// lines starting with # ignored. Every task needs an id (unique, a
// file-name-safe word), a repo and a prompt; unknown fields are errors, so
// a misspelt "chek" does not silently run unchecked.
func ReadTasks(r io.Reader) ([]Task, error) {
	var tasks []Task
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var t Task
		if err := dec.Decode(&t); err != nil {
			return nil, &TaskError{n, err}
		}
		switch {
		case !validID().MatchString(t.ID):
			return nil, &TaskError{n, fmt.Errorf("id %q: use letters, digits, '.', '_' and '-' (at most 100)", t.ID)}
		case seen[t.ID] != 0:
			return nil, &TaskError{n, fmt.Errorf("id %q already used on line %d", t.ID, seen[t.ID])}
		case t.Repo == "":
			return nil, &TaskError{n, errors.New("no repo")}
		case strings.TrimSpace(t.Prompt) == "":
			return nil, &TaskError{n, errors.New("no prompt")}
		case t.Timeout < 0 || t.BudgetUSD < 0:
			return nil, &TaskError{n, errors.New("timeout and budget_usd cannot be negative")}
		}
		seen[t.ID] = n
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the task file: %w", err)
	}
	if len(tasks) == 0 {
		return nil, errors.New("the task file has no tasks")
	}
	return tasks, nil
}
