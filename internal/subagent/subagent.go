package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// Name is the tool's name.
const Name = "task"

// Forbidden are the tools a sub-agent never gets: every file writer, the
// main agent's plan, task itself (no recursion), and the main agent's
// background commands. A sub-agent owns no job (its bash is the read-only
// variant, which starts none, so nothing outlives it), and the session's
// jobs are the main agent's: bash_stop would kill its dev server, and
// bash_output would consume the output the main agent has not read yet.
var Forbidden = []string{"write_file", "edit_file", "write_todos", Name, "bash_output", "bash_stop"}

// DefaultMaxSteps bounds one sub-agent: enough to explore, small enough
// that a confused one comes back soon.
const DefaultMaxSteps = 40

// Config is what every sub-agent of a session shares.
type Config struct {
	Provider llm.Provider
	Model    string
	// System is the sub-agent's system prompt
	// (agent.SystemPrompt with SubAgent set).
	System string
	// Tools is the main agent's registry; the Forbidden tools are removed.
	Tools *tools.Registry
	// Gate, when set, is the main registry's gate; the sub-agent's registry
	// uses it wrapped so any call declaring a write is refused.
	Gate tools.Gate
	// NewHistory returns an empty history for one sub-agent.
	NewHistory func() *history.History
	Log        *sessionlog.Log
	// AddUsage counts a sub-agent's usage into the session's
	// (agent.Agent.AddUsage of the main agent).
	AddUsage  func(llm.Usage)
	MaxSteps  int // 0: DefaultMaxSteps
	MaxTokens int
	SessionID string
	// Observer, when set, returns the observer of the sub-agent with that
	// label, for display.
	Observer func(label string) agent.Observer
	// Hooks, when set, fire for the sub-agent's calls and its end
	// (SubagentStop).
	Hooks agent.Hooks
	// Ledger, when set, is the session's cost ledger: the sub-agent's
	// requests are booked under its label.
	Ledger *ledger.Book
}

// Task is the task tool.
type Task struct {
	c     Config
	tools *tools.Registry
	n     atomic.Int64
}

// New returns the task tool.
func New(c Config) *Task {
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.NewHistory == nil {
		c.NewHistory = func() *history.History { return history.New(history.Config{}) }
	}
	return &Task{c: c, tools: ReadOnly(c.Tools, c.Gate)}
}

// ReadOnly returns r without the Forbidden tools. With a non-nil gate the
// result runs behind that gate, refusing every call that declares a write.
//
// A tool with a read-only variant (bash: the project mounted read-only, a
// private /tmp writable) is replaced by it; one whose variant is nil (the
// sandbox has none) is left out, so a sub-agent never writes through it.
func ReadOnly(r *tools.Registry, gate tools.Gate) *tools.Registry {
	ro := r.Without(Forbidden...)
	ts, changed := readOnlyTools(ro.All())
	if gate == nil && !changed {
		return ro
	}
	if gate == nil {
		// The variants behind r's own gate.
		return ro.Without(ro.Names()...).With(ts...)
	}
	return tools.NewRegistry(readOnlyGate{gate}, ts...)
}

// readOnlyTools is ts with each read-only variant in place of its tool,
// and without a tool whose variant is nil; changed says one had one.
func readOnlyTools(ts []tools.Tool) (out []tools.Tool, changed bool) {
	for _, t := range ts {
		if v, ok := t.(readOnlyVariant); ok {
			changed = true
			if t = v.ReadOnlyVariant(); t == nil {
				continue
			}
		}
		out = append(out, t)
	}
	return out, changed
}

// Add gives the sub-agents ts as well (their read-only variants, none
// of the Forbidden): tools listed only once something started (late MCP
// tools), added before the session's first request.
func (t *Task) Add(ts ...tools.Tool) {
	var keep []tools.Tool
	for _, x := range ts {
		if !slices.Contains(Forbidden, x.Spec().Name) {
			keep = append(keep, x)
		}
	}
	keep, _ = readOnlyTools(keep)
	t.tools.Add(keep...)
}

// readOnlyVariant is a tool that can run under read-only walls.
type readOnlyVariant interface {
	ReadOnlyVariant() tools.Tool
}

// HasBash reports whether the sub-agents' tool set has bash (its
// read-only variant).
func (t *Task) HasBash() bool { return t.tools.Lookup("bash") != nil }

type readOnlyGate struct{ next tools.Gate }

func (g readOnlyGate) Check(ctx context.Context, a tools.Access) (bool, string) {
	if a.Write {
		return false, fmt.Sprintf("refused: sub-agents are read-only and cannot write %s; report what should change and the main agent will do it", a.Path)
	}
	return g.next.Check(ctx, a)
}

// Tools is the registry sub-agents run on.
func (t *Task) Tools() *tools.Registry { return t.tools }

// Concurrent lets several task calls of one reply run side by side.
func (t *Task) Concurrent() bool { return true }

type taskArgs struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
}

// Spec implements tools.Tool.
func (t *Task) Spec() llm.Tool {
	can := "It can read and search files, and run sandboxed commands that cannot write the project (only a private /tmp), " +
		"but cannot write or edit files."
	if !t.HasBash() {
		can = "It can read and search files but has no bash (this sandbox cannot hold the project read-only) and cannot " +
			"write or edit files."
	}
	return llm.Tool{
		Name: Name,
		Description: "Start a read-only sub-agent with a fresh context window to research one question: find where " +
			"something is defined or used, understand how a part works, survey many files. " + can + " Only its final report comes back, which keeps " +
			"your own context small. The prompt must be self-contained (the sub-agent sees nothing of this " +
			"conversation) and say exactly what to report. Several task calls in one reply run in parallel.",
		Schema: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string","description":"A short (3-6 word) label for the task."},"prompt":{"type":"string","description":"The complete, self-contained task and what to report."}},"required":["description","prompt"]}`),
	}
}

// Access implements tools.Tool: starting a sub-agent touches nothing; its
// own calls pass the gate one by one.
func (t *Task) Access(input json.RawMessage) (tools.Access, error) {
	var a taskArgs
	if err := decodeArgs(input, &a); err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Tool: Name}, nil
}

func decodeArgs(input json.RawMessage, a *taskArgs) error {
	if err := json.Unmarshal(input, a); err != nil {
		return fmt.Errorf("arguments must be a JSON object with description and prompt: %w", err)
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return errors.New("missing required argument \"prompt\": say what the sub-agent should find out and report")
	}
	return nil
}

// Run implements tools.Tool: it runs one sub-agent to its final report.
func (t *Task) Run(ctx context.Context, input json.RawMessage) tools.Result {
	var a taskArgs
	if err := decodeArgs(input, &a); err != nil {
		return tools.Errorf("%v", err)
	}
	label := fmt.Sprintf("task-%d", t.n.Add(1))
	if err := t.c.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Agent: label, Text: "sub-agent started: " + a.Description}); err != nil {
		// Not started unrecorded; the main agent's next append meets the
		// same failure and stops the turn.
		return tools.Errorf("the sub-agent was not started: %v", err)
	}
	var obs agent.Observer
	if t.c.Observer != nil {
		obs = t.c.Observer(label)
	}
	sub := agent.New(agent.Options{
		Provider:  t.c.Provider,
		Model:     t.c.Model,
		System:    t.c.System,
		Tools:     t.tools,
		History:   t.c.NewHistory(),
		Log:       t.c.Log,
		MaxSteps:  t.c.MaxSteps,
		MaxTokens: t.c.MaxTokens,
		SessionID: t.c.SessionID,
		Label:     label,
		Hooks:     t.c.Hooks,
		Ledger:    t.c.Ledger,
	})
	res, err := sub.Run(ctx, a.Prompt, obs)
	if t.c.AddUsage != nil {
		t.c.AddUsage(sub.Usage())
	}
	steps := 0
	if res != nil {
		steps = res.Steps
	}
	switch {
	case errors.Is(err, agent.ErrInterrupted):
		return tools.Errorf("the sub-agent (%s) was interrupted after %d steps; no report", a.Description, steps)
	case err != nil:
		return tools.Errorf("the sub-agent (%s) failed after %d steps: %v", a.Description, steps, err)
	case res.HitStepLimit:
		report := lastText(sub.History().Messages())
		if report == "" {
			report = "(no report: it was still working)"
		}
		return tools.Result{Content: report + fmt.Sprintf("\n\n[note: the sub-agent hit its limit of %d steps before finishing; this report may be incomplete. Narrow the task or split it.]", t.c.MaxSteps)}
	}
	if strings.TrimSpace(res.Text) == "" {
		return tools.Result{Content: "(the sub-agent finished without a report)"}
	}
	return tools.Result{Content: res.Text}
}

// lastText is the text of the newest assistant message that has any.
func lastText(ms []llm.Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == llm.RoleAssistant {
			if t := strings.TrimSpace(ms[i].PlainText()); t != "" {
				return t
			}
		}
	}
	return ""
}
