package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// Access is what a call will do, for the permission gate.
type Access struct {
	Tool    string
	Command string // bash
	Path    string // file tools, absolute
	Write   bool
	// ReadOnly: the tool declares it changes nothing (an MCP tool's
	// readOnlyHint). Only plan mode reads it: the rules decide by name.
	ReadOnly bool
}

// Gate decides whether a call may run. msg explains a refusal to the model.
type Gate interface {
	Check(ctx context.Context, a Access) (ok bool, msg string)
}

// GateFunc adapts a function to Gate.
type GateFunc func(ctx context.Context, a Access) (bool, string)

// Check implements Gate.
func (f GateFunc) Check(ctx context.Context, a Access) (bool, string) { return f(ctx, a) }

// Result is a tool's answer to the model.
type Result struct {
	Content string
	IsError bool
	// Image, when set, goes to the model with the result (read_file of an
	// image, for a model that takes images).
	Image *llm.Image

	malformed bool // the call itself was malformed: the harness's feedback
}

// Errorf builds an error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is one callable tool.
type Tool interface {
	Spec() llm.Tool
	// Access decodes the arguments into what the gate needs to know; an
	// error means the arguments are unusable and the call does not run.
	Access(input json.RawMessage) (Access, error)
	Run(ctx context.Context, input json.RawMessage) Result
}

// Registry runs tool calls. Its tool order is fixed at construction, so the
// tool definitions sent to the provider are byte-stable; Add is for tools
// that can only be listed once something has started, before the first
// request.
type Registry struct {
	mu     sync.RWMutex // tools and byName: Add may run beside readers
	tools  []Tool
	byName map[string]Tool
	gate   Gate
	cp     Checkpointer
}

// Checkpointer keeps what a call that can write is about to change
// (package checkpoint): Begin before it runs, the returned func after.
type Checkpointer interface {
	// paths, for a file tool, are the only paths the call writes.
	Begin(callID, tool string, paths ...string) (end func())
}

// SetCheckpointer has every call that can write (bash, and the file
// tools that write) checkpointed by c; nil turns it off.
func (r *Registry) SetCheckpointer(c Checkpointer) { r.cp = c }

// NewRegistry returns a registry of the given tools in the given order.
// Every call goes through gate; a nil gate is a construction error (it
// panics), since a registry without one would run every call unchecked.
// A test that means to check nothing says so with a gate that allows all.
func NewRegistry(gate Gate, tools ...Tool) *Registry {
	if gate == nil {
		panic("tools.NewRegistry: nil gate: every call must be checked")
	}
	r := &Registry{gate: gate, byName: map[string]Tool{}}
	for _, t := range tools {
		r.tools = append(r.tools, t)
		r.byName[t.Spec().Name] = t
	}
	return r
}

// Without returns a registry lacking the named tools: the sub-agent's
// read-only tool set is built this way, so a removed tool cannot be called
// even if the model names it.
func (r *Registry) Without(names ...string) *Registry {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	var keep []Tool
	for _, t := range r.All() {
		if !drop[t.Spec().Name] {
			keep = append(keep, t)
		}
	}
	return NewRegistry(r.gate, keep...)
}

// With returns a registry with t added (or replacing the tool of its name).
func (r *Registry) With(ts ...Tool) *Registry {
	out := NewRegistry(r.gate, r.All()...)
	out.add(ts)
	return out
}

// Add adds ts to r itself (or replaces the tools of their names): tools
// listed only once something started (MCP servers started beside the
// session, each tool listed with its schema), added before the request
// that first sends the list, so every request sends the same one.
func (r *Registry) Add(ts ...Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(ts)
}

func (r *Registry) add(ts []Tool) {
	for _, t := range ts {
		name := t.Spec().Name
		if _, ok := r.byName[name]; ok {
			for i, old := range r.tools {
				if old.Spec().Name == name {
					r.tools[i] = t
				}
			}
		} else {
			r.tools = append(r.tools, t)
		}
		r.byName[name] = t
	}
}

// All returns the tools in registry order.
func (r *Registry) All() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Tool(nil), r.tools...)
}

// Lookup returns the tool of that name, or nil.
func (r *Registry) Lookup(name string) Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// Specs returns the tool definitions in registry order.
func (r *Registry) Specs() []llm.Tool {
	ts := r.All()
	out := make([]llm.Tool, len(ts))
	for i, t := range ts {
		out[i] = t.Spec()
	}
	return out
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Run executes one tool_use block and returns its tool_result block. It never
// panics and never returns an error: every failure is a result for the model.
func (r *Registry) Run(ctx context.Context, call llm.Block) (out llm.Block) {
	res := r.run(ctx, call)
	b := llm.Block{Type: llm.BlockToolResult, ToolUseID: call.ID, Content: res.Content, IsError: res.IsError, Image: res.Image}
	if res.malformed {
		b.Layer = llm.LayerFeedback // the harness's words on a malformed call
	}
	return b
}

// malformedf is the answer to a call the tools could not take as sent.
func malformedf(format string, args ...any) Result {
	r := Errorf(format, args...)
	r.malformed = true
	return r
}

func (r *Registry) run(ctx context.Context, call llm.Block) (res Result) {
	t := r.Lookup(call.Name)
	if t == nil {
		return malformedf("unknown tool %q; the tools that exist are: %s", call.Name, strings.Join(r.Names(), ", "))
	}
	input := call.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	// Adapters keep arguments that did not parse as a JSON string of the
	// raw text, so the block stays valid JSON; unwrap it for the message.
	var raw string
	if json.Unmarshal(input, &raw) == nil {
		input = json.RawMessage(raw)
	}
	if !json.Valid(input) {
		return malformedf("the arguments for %s are not valid JSON (%s); send a JSON object matching the tool's schema", call.Name, clip(string(input), 200))
	}
	defer func() {
		if p := recover(); p != nil {
			res = Errorf("tool %s crashed: %v; this is a harness bug, try another way. Stack:\n%s", call.Name, p, clip(string(debug.Stack()), 2000))
		}
	}()
	acc, err := t.Access(input)
	if err != nil {
		return malformedf("bad arguments for %s: %v", call.Name, err)
	}
	if ok, msg := r.gate.Check(ctx, acc); !ok {
		return Errorf("%s", msg)
	}
	if err := ctx.Err(); err != nil {
		return Errorf("cancelled by the user before it ran")
	}
	if r.cp != nil && (acc.Write || acc.Tool == "bash") {
		// A file tool writes its one path, and only what it wrote is its
		// change; a command's is whatever the scan finds.
		var paths []string
		if acc.Tool != "bash" && acc.Path != "" {
			paths = []string{acc.Path}
		}
		if cc, ok := r.cp.(CommandCheckpointer); ok && acc.Tool == "bash" {
			// The sandbox says what the command wrote (wrote.go): only
			// that is its change, not a hand edit made meanwhile.
			journal, end := cc.BeginCommand(call.ID, call.Name)
			var w *wroteReport
			ctx, w = withWroteReport(ctx, journal)
			defer func() { end(w.result()) }()
			return t.Run(ctx, input)
		}
		end := r.cp.Begin(call.ID, call.Name, paths...)
		defer end()
	}
	return t.Run(ctx, input)
}

// decode unmarshals input into v and checks that the required fields are
// present and non-empty, naming the first one that is not.
func decode(input json.RawMessage, v any, required ...string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(input, &raw); err != nil {
		return fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	for _, k := range required {
		if val, ok := raw[k]; !ok || string(val) == "null" {
			return fmt.Errorf("missing required argument %q", k)
		}
	}
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("arguments do not match the schema: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
