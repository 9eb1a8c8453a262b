package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/subagent"
	"github.com/harness-dev/harness/internal/tools"
)

// MCPStarted is how one MCP server's start beside the session ended.
type MCPStarted struct {
	Name  string
	Err   error // nil: connected
	Tools int   // the tools it lists, once connected
}

// mcpStarts follows the MCP servers starting beside an interactive
// session (Options.MCPInBackground): which still start, how the others
// ended, and who wants to know.
type mcpStarts struct {
	mu      sync.Mutex
	pending map[string]bool
	ended   []MCPStarted // in the order they ended, for a watcher set late
	watch   func(MCPStarted)
	changed chan struct{} // closed and renewed whenever a start ends
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newMCPStarts(names []string, cancel context.CancelFunc) *mcpStarts {
	st := &mcpStarts{pending: map[string]bool{}, changed: make(chan struct{}), cancel: cancel}
	for _, n := range names {
		st.pending[n] = true
	}
	st.wg.Add(len(names))
	return st
}

// done records the end of name's start and tells the watcher.
func (st *mcpStarts) done(e MCPStarted) {
	st.mu.Lock()
	delete(st.pending, e.Name)
	st.ended = append(st.ended, e)
	w := st.watch
	close(st.changed)
	st.changed = make(chan struct{})
	st.mu.Unlock()
	if w != nil {
		w(e)
	}
	st.wg.Done()
}

// starting lists the servers still starting, sorted.
func (st *mcpStarts) starting() []string {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for n := range st.pending {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// wait returns once the start of server ("" : of every server) ended,
// or with ctx's error (Esc stops a tool call that waits).
func (st *mcpStarts) wait(ctx context.Context, server string) error {
	for {
		st.mu.Lock()
		busy := len(st.pending) > 0
		if server != "" {
			busy = st.pending[server]
		}
		ch := st.changed
		st.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop ends the starts still running and waits for them, so the
// Manager can be closed.
func (st *mcpStarts) stop() {
	st.mu.Lock()
	st.watch = nil // a start cancelled on the way out is news to no one
	st.mu.Unlock()
	st.cancel()
	st.wg.Wait()
}

// MCPStarting names the MCP servers still starting beside the session.
func (s *Session) MCPStarting() []string { return s.mcpStarts.starting() }

// WatchMCP has f told how each MCP server's start beside the session
// ended: at once for those that ended already, then as each ends (from
// another goroutine). f replaces the previous watcher.
func (s *Session) WatchMCP(f func(MCPStarted)) {
	st := s.mcpStarts
	if st == nil {
		return
	}
	st.mu.Lock()
	st.watch = f
	ended := slices.Clone(st.ended)
	st.mu.Unlock()
	for _, e := range ended {
		if f == nil {
			break
		}
		f(e)
	}
}

// beginMCP starts the servers beside the session: Open returns at once.
// The lazy tools wait for the server a call names (or, for a search,
// for every server still starting); a network question a start raises
// stops its start timeout while it waits (notifyingPrompter).
func (b *builder) beginMCP(ctx context.Context, run []mcp.Server, o mcp.Options) *mcp.Manager {
	s := b.s
	var names []string
	for _, d := range run {
		names = append(names, d.Name)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	st := newMCPStarts(names, cancel)
	s.mcpStarts = st
	readOnly := b.policy().ProjectReadOnly()
	var m *mcp.Manager
	ready := make(chan struct{})
	m = mcp.Begin(sctx, run, o, func(name string, err error) {
		<-ready // m is set
		e := MCPStarted{Name: name, Err: err}
		if err == nil {
			for _, x := range m.Statuses() {
				if x.Name == name {
					e.Tools = x.Tools
				}
			}
			if ro := b.policy().ProjectReadOnly(); ro != readOnly && sctx.Err() == nil {
				// The mode changed while it started, under the walls of
				// the old one: it starts again under the new.
				m.Follow(ro)
			}
		}
		st.done(e)
	})
	close(ready)
	return m
}

// waitingTools wraps the lazy MCP tools so a call waits for the start of
// the server it names.
func waitingTools(ts []tools.Tool, st *mcpStarts, names []string) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = &waitingTool{Tool: t, st: st, names: names}
	}
	return out
}

// waitingTool is an MCP tool that waits for its server's start.
type waitingTool struct {
	tools.Tool
	st    *mcpStarts
	names []string
}

func (t *waitingTool) Run(ctx context.Context, input json.RawMessage) tools.Result {
	server := t.server(input)
	if err := t.st.wait(ctx, server); err != nil {
		return tools.Errorf("cancelled while waiting for MCP servers to start (%s)", strings.Join(t.st.starting(), ", "))
	}
	return t.Tool.Run(ctx, input)
}

// server is the server a call names: mcp_call's tool name
// (mcp__SERVER__TOOL, the longest server name that fits), mcp_search's
// server; "" for every server.
func (t *waitingTool) server(input json.RawMessage) string {
	var in struct{ Name, Server string }
	json.Unmarshal(input, &in)
	if in.Server != "" {
		return in.Server
	}
	best := ""
	for _, n := range t.names {
		if strings.HasPrefix(in.Name, mcp.Prefix+n+"__") && len(n) > len(best) {
			best = n
		}
	}
	return best
}

// pausedStarts stops the start clocks of the MCP servers still starting
// while the user answers a prompt; the result restarts them.
func (s *Session) pausedStarts() func() {
	if s.mcpStarts == nil || len(s.mcpStarts.starting()) == 0 {
		return func() {}
	}
	return s.MCP.PauseStarts()
}

// lateMCP settles, before a session's first request, what depends on
// MCP servers started beside it (Options.MCPInBackground), so the prompt
// is usable at once and every request still sends one prefix:
//
//   - eager tools (MCP_TOOLS=eager) are listed once: the first request
//     waits for every start (Esc or Ctrl-C stop the wait and the turn;
//     the next turn waits again) and then lists every server's tools;
//   - lazy, nothing waits: the system prompt gets the instructions of
//     the servers connected by then, and any later one's go with the
//     first mcp_search answer that lists its tools (mcp.Manager.Search).
//
// Either way the session log then records the prompt sent.
type lateMCP struct {
	b     *builder
	eager bool
	task  *subagent.Task // the sub-agents' tools get the eager ones too
	mu    sync.Mutex
	done  bool
}

// ready is agent.Options.Ready; nil (a nil lateMCP) when nothing is late.
func (l *lateMCP) ready(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	s := l.b.s
	if l.eager {
		if names := s.mcpStarts.starting(); len(names) > 0 {
			s.tell(notice.Info(notice.MCP, "waiting for MCP servers to start ("+strings.Join(names, ", ")+"): with MCP_TOOLS=eager the first request lists every tool; Esc stops the wait"))
		}
		if err := s.mcpStarts.wait(ctx, ""); err != nil {
			return fmt.Errorf("stopped while waiting for MCP servers to start (%s): %w", strings.Join(s.mcpStarts.starting(), ", "), err)
		}
		ts := s.MCP.Tools(false)
		s.Registry.Add(ts...)
		if l.task != nil {
			l.task.Add(ts...)
		}
	}
	info := l.b.info
	info.MCPInstructions = s.MCP.Instructions()
	l.b.system = agent.SystemPrompt(info)
	s.Agent.SetSystem(l.b.system)
	l.done = true
	warned := len(s.Warnings)
	if err := l.b.logPrompt(ctx); err != nil {
		s.tell(logFailed("could not record the session's prompt", err))
	}
	for _, w := range s.Warnings[warned:] {
		s.tell(w) // Open's warnings were shown already; this one is news
	}
	return nil
}
