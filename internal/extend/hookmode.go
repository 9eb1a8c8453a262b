package extend

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errNarrowed is why a project hook was stopped: the walls narrowed
// under it.
var errNarrowed = errors.New("the session switched to plan mode while it ran")

// hookRuns are the project hooks running inside writable walls, so that a
// switch into plan mode stops them (Hooks.Follow) as it stops commands.
type hookRuns struct {
	mu   sync.Mutex
	runs map[*hookRun]struct{}
}

type hookRun struct {
	stop context.CancelCauseFunc
	done chan struct{}
}

// start registers a project hook about to run; readOnly says whether the
// walls are read-only now (then it runs under them and is not tracked).
// The result says which walls to run it under, chosen under the lock, so
// a switch either comes first or finds it here.
func (r *hookRuns) start(ctx context.Context, readOnly func() bool) (context.Context, bool, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if readOnly() {
		return ctx, true, func() {}
	}
	run, stop := context.WithCancelCause(ctx)
	hr := &hookRun{stop: stop, done: make(chan struct{})}
	if r.runs == nil {
		r.runs = map[*hookRun]struct{}{}
	}
	r.runs[hr] = struct{}{}
	return run, false, func() {
		r.mu.Lock()
		delete(r.runs, hr)
		r.mu.Unlock()
		close(hr.done)
		stop(nil)
	}
}

// Follow stops the project hooks running under writable walls when the
// walls narrow (a Follower), with all they started, and returns once
// they are gone. A hook is the user's approved code run for an event; it
// is not run again: the event it answered has passed.
func (h *Hooks) Follow(readOnly bool) []string {
	if !readOnly {
		return nil
	}
	h.runs.mu.Lock()
	var all []*hookRun
	for hr := range h.runs.runs {
		all = append(all, hr)
	}
	h.runs.mu.Unlock()
	for _, hr := range all {
		hr.stop(errNarrowed)
	}
	n := 0
	for _, hr := range all {
		select {
		case <-hr.done:
			n++
		case <-time.After(30 * time.Second):
		}
	}
	switch {
	case n == 1:
		return []string{"a project hook that was running was stopped."}
	case n > 1:
		return []string{"the project hooks that were running were stopped."}
	}
	return nil
}

// projectReadOnly reports whether the walls hold the project read-only.
func (h *Hooks) projectReadOnly() bool {
	if h.o.Sandbox == nil {
		return false
	}
	p := h.o.Sandbox.Policy()
	return p != nil && p.ProjectReadOnly()
}
