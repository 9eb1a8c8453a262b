package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// A mode is a state of the whole session (package extend, Modes). When
// plan mode makes the project read-only, a stdio server started before
// the switch still runs under the walls it started with, and could go on
// writing the project on its own, between calls or through a tool that
// claims to be read-only. So Follow kills every running stdio server at
// once and starts it again under the walls now in force: in plan mode the
// read-only ones, where the kernel refuses its writes to the project
// whatever its tools say, and when plan mode ends the writable ones
// again. Its read-only tools keep working while the user plans. A remote
// server (http, sse) runs elsewhere and cannot be restarted under any
// walls: the permission gate refuses, in plan mode, every MCP tool that
// does not declare itself read-only (readOnlyHint), of any server.

// errModeSwitched is why Follow cancelled a call in flight.
var errModeSwitched = errors.New("the session switched to plan mode")

// restarts tracks the servers Follow is starting again, and the calls in
// flight of tools that do not declare themselves read-only.
type restarts struct {
	mu     sync.Mutex
	calls  map[*int]context.CancelCauseFunc
	ready  map[*conn]chan struct{} // closed when that server's restart is over
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// Follow brings the servers into line with the walls after a mode switch
// (an extend.Follower; readOnly: the project is now read-only). It kills
// every stdio server that runs (or that an earlier switch restarted) and
// returns once they are dead; their new start goes on in the background,
// and a call to such a server waits for it. It returns what it did, for
// the user and the model.
func (m *Manager) Follow(readOnly bool) []string {
	if m == nil || len(m.servers) == 0 {
		return nil
	}
	ctx, stdio, ready, calls, ok := m.followPlan(readOnly)
	if !ok {
		return nil // closed
	}
	// Kill first, all at once: from here on nothing of theirs writes.
	killAll(stdio)
	// Then a call in flight of a tool that may write is cancelled (the
	// server is told, notifications/cancelled): a remote server's, or one
	// to a stdio server that was just killed. Killed first, a stdio server
	// does not answer the cancellation by writing.
	for _, stop := range calls {
		stop(errModeSwitched)
	}
	for _, c := range stdio {
		go m.restart(ctx, c, ready[c])
	}
	return followNotes(stdio, readOnly)
}

// followPlan picks, under the lock, the stdio servers to restart (each
// with a channel closed once it is up again) and, for read-only walls,
// the calls in flight to cancel; ok is false once the Manager is closed.
func (m *Manager) followPlan(readOnly bool) (ctx context.Context, stdio []*conn, ready map[*conn]chan struct{}, calls []context.CancelCauseFunc, ok bool) {
	m.rs.mu.Lock()
	defer m.rs.mu.Unlock()
	if m.rs.ctx == nil {
		m.rs.ctx, m.rs.cancel = context.WithCancel(context.Background())
		m.rs.ready = map[*conn]chan struct{}{}
	}
	if m.rs.ctx.Err() != nil {
		return nil, nil, nil, nil, false
	}
	for _, c := range m.servers {
		// A remote server is left as it is: the gate holds its tools.
		if c.def.Transport() == "stdio" && (c.connected() != nil || c.followed) {
			c.followed = true
			stdio = append(stdio, c)
		}
	}
	ready = map[*conn]chan struct{}{}
	for _, c := range stdio {
		ready[c] = make(chan struct{})
		m.rs.ready[c] = ready[c]
		m.rs.wg.Add(1)
	}
	if readOnly {
		for _, stop := range m.rs.calls {
			calls = append(calls, stop)
		}
	}
	return m.rs.ctx, stdio, ready, calls, true
}

// killAll kills the servers at once and waits for each to be gone; each
// server's renewMu stays held until its restart (no renewal races it).
func killAll(stdio []*conn) {
	var wg sync.WaitGroup
	for _, c := range stdio {
		c.renewMu.Lock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if t := c.transport(); t != nil && t.cancel != nil {
				t.mu.Lock()
				t.killedFor = "the session's mode changed its walls"
				t.mu.Unlock()
				t.cancel() // no grace period: the walls changed now
				// Dead before its stdin closes: a server that saw EOF
				// first could still write while it shuts down.
				select {
				case <-t.done:
				case <-time.After(10 * time.Second):
				}
			}
			c.close()
		}()
	}
	wg.Wait()
}

// restart starts c again under the walls now in force, then releases its
// renewMu and closes ready.
func (m *Manager) restart(ctx context.Context, c *conn, ready chan struct{}) {
	defer m.rs.wg.Done()
	defer c.renewMu.Unlock()
	defer func() {
		m.rs.mu.Lock()
		delete(m.rs.ready, c)
		m.rs.mu.Unlock()
		close(ready)
	}()
	// Its lists stay as they were until the new start lists them again:
	// a read-only tool called meanwhile is still known as one (and waits
	// for the start in call).
	c.mu.Lock()
	c.err = nil
	c.mu.Unlock()
	if err := c.start(ctx); err != nil && ctx.Err() == nil && m.o.Notify != nil {
		m.o.Notify(fmt.Sprintf("%v (restarting it under the walls of the new mode); its tools fail until harness restarts", err))
	}
}

// followNotes tells the model what the switch did to the servers.
func followNotes(stdio []*conn, readOnly bool) []string {
	var names []string
	for _, c := range stdio {
		names = append(names, c.def.Name)
	}
	sort.Strings(names)
	var notes []string
	switch {
	case len(stdio) > 0 && readOnly:
		notes = append(notes, "the MCP servers "+strings.Join(names, ", ")+" were stopped and are starting again under the read-only walls: they cannot write the project while plan mode holds.")
	case len(stdio) > 0:
		notes = append(notes, "the MCP servers "+strings.Join(names, ", ")+" were stopped and are starting again under the writable walls.")
	}
	if readOnly {
		notes = append(notes, "In plan mode every MCP tool that does not declare itself read-only (readOnlyHint) is refused.")
	}
	return notes
}

// awaitRestart waits until a restart Follow began for c is over.
func (m *Manager) awaitRestart(ctx context.Context, c *conn) error {
	m.rs.mu.Lock()
	ch := m.rs.ready[c]
	m.rs.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stopRestarts ends the restarts under way and waits for them (Close).
func (m *Manager) stopRestarts() {
	m.rs.mu.Lock()
	if m.rs.ctx == nil {
		m.rs.ctx, m.rs.cancel = context.WithCancel(context.Background())
	}
	m.rs.cancel()
	m.rs.mu.Unlock()
	m.rs.wg.Wait()
}

// track registers a call in flight of a tool that does not declare itself
// read-only, so that a switch into plan mode cancels it; the returned
// func unregisters it.
func (r *restarts) track(ctx context.Context, readOnly bool) (context.Context, func()) {
	if readOnly {
		return ctx, func() {}
	}
	cctx, stop := context.WithCancelCause(ctx)
	key := new(int)
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[*int]context.CancelCauseFunc{}
	}
	r.calls[key] = stop
	r.mu.Unlock()
	return cctx, func() {
		r.mu.Lock()
		delete(r.calls, key)
		r.mu.Unlock()
		stop(nil)
	}
}

// projectReadOnly reports whether the session's walls hold the project
// read-only now (plan mode). A call of a tool that may write checks it
// after track registered it: a switch either finds the call registered
// and cancels it, or happened before, and the call sees it here.
func (m *Manager) projectReadOnly() bool {
	if m.o.Sandbox == nil {
		return false
	}
	p := m.o.Sandbox.Policy()
	return p != nil && p.ProjectReadOnly()
}
