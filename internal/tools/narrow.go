package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
)

// A mode is a state of the whole session (package extend, Modes): when
// plan mode makes the project read-only, what already runs under writable
// walls must not go on writing. A running process cannot be moved into
// other walls, so it is stopped, with everything it started (the
// sandbox's whole-tree kill, the same on every backend): every background
// command started under writable walls, and every foreground command in
// flight. Freezing them instead (SIGSTOP, the cgroup freezer) was weighed
// and left: no backend has a freezer on every machine (macOS has none, a
// SIGSTOP sweep races forks), and a frozen dev server still holds its
// port and hangs every client while the user plans. A stopped job is not
// restarted when plan mode ends: what it was doing may no longer be what
// the plan wants, so the model is told and starts it again if it should.

// errNarrowed is why a command was stopped: the walls narrowed under it.
var errNarrowed = errors.New("the session switched to plan mode")

// inflight is one foreground command running under writable walls.
type inflight struct {
	command string
	stop    context.CancelCauseFunc
	done    chan struct{}
}

// projectReadOnly reports whether sb's project is read-only now (plan mode).
func projectReadOnly(sb sandbox.Sandbox) bool {
	if sb == nil {
		return false
	}
	p := sb.Policy()
	return p != nil && p.ProjectReadOnly()
}

// foreground registers a foreground command about to run. readOnly is
// whether its caller asked for the read-only walls; the result says which
// walls it must run under (read-only also in plan mode), chosen under
// js.mu so that a switch into plan mode either comes first or finds the
// command here and stops it. end must be called when it has ended.
func (js *Jobs) foreground(ctx context.Context, command string, readOnly bool) (run context.Context, ro bool, end func()) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if readOnly || projectReadOnly(js.Sandbox) {
		return ctx, true, func() {}
	}
	run, stop := context.WithCancelCause(ctx)
	f := &inflight{command: command, stop: stop, done: make(chan struct{})}
	if js.inFlight == nil {
		js.inFlight = map[*inflight]struct{}{}
	}
	js.inFlight[f] = struct{}{}
	return run, false, func() {
		js.mu.Lock()
		delete(js.inFlight, f)
		js.mu.Unlock()
		close(f.done)
		stop(nil)
	}
}

// narrowedNote is what the model reads after a command stopped by a switch
// into plan mode.
func narrowedNote(ctx context.Context) string {
	if !errors.Is(context.Cause(ctx), errNarrowed) {
		return ""
	}
	return "\n[harness: stopped because the session switched to plan mode while it ran: the project is read-only now, and it and every process it started were killed. What it wrote before stays]"
}

// Follow brings the session's commands into line with the walls after a
// mode switch (an extend.Follower): into plan mode it stops what runs
// under writable walls (Narrow); out of it, it says what stays as it is.
func (js *Jobs) Follow(readOnly bool) []string {
	if readOnly {
		return js.Narrow()
	}
	return js.widened()
}

// stopWait bounds how long Narrow waits for one stopped command to end.
const stopWait = 30 * time.Second

// Narrow stops every background command and every foreground command
// running under writable walls, with everything they started, and returns
// when they are gone: one sentence per command for the user and the model.
func (js *Jobs) Narrow() []string {
	js.mu.Lock()
	js.init()
	var stop []*job
	for _, j := range js.jobs {
		j.mu.Lock()
		if !j.readOnly && !j.over() {
			j.stopped, j.narrowed = true, true
			stop = append(stop, j)
		}
		j.mu.Unlock()
	}
	var fg []*inflight
	for f := range js.inFlight {
		fg = append(fg, f)
	}
	js.mu.Unlock()
	sort.Slice(stop, func(a, b int) bool { return stop[a].started.Before(stop[b].started) })
	for _, j := range stop {
		j.cancel()
	}
	for _, f := range fg {
		f.stop(errNarrowed)
	}
	var notes []string
	for _, j := range stop {
		select {
		case <-j.done:
			notes = append(notes, fmt.Sprintf("the background command %s (%s), started under writable walls, was stopped with everything it started; it is not restarted when plan mode ends.", j.id, clip(oneLine(j.command), 60)))
		case <-time.After(stopWait):
			notes = append(notes, fmt.Sprintf("the background command %s (%s) was told to stop but had not ended after %s.", j.id, clip(oneLine(j.command), 60), stopWait))
		}
	}
	for _, f := range fg {
		select {
		case <-f.done:
			notes = append(notes, fmt.Sprintf("the command in flight (%s) was stopped.", clip(oneLine(f.command), 60)))
		case <-time.After(stopWait):
			notes = append(notes, fmt.Sprintf("the command in flight (%s) was told to stop but had not ended after %s.", clip(oneLine(f.command), 60), stopWait))
		}
	}
	return notes
}

// widened says, once the walls widen again, which background commands
// plan mode stopped (not restarted) and which keep the read-only walls
// they started under.
func (js *Jobs) widened() []string {
	js.mu.Lock()
	var all []*job
	for _, j := range js.jobs {
		all = append(all, j)
	}
	js.mu.Unlock()
	sort.Slice(all, func(a, b int) bool { return all[a].started.Before(all[b].started) })
	var stopped, ro []string
	for _, j := range all {
		j.mu.Lock()
		switch {
		case j.narrowed && !j.told:
			j.told = true
			stopped = append(stopped, j.id)
		case j.readOnly && !j.over():
			ro = append(ro, j.id)
		}
		j.mu.Unlock()
	}
	var notes []string
	if len(stopped) > 0 {
		notes = append(notes, "the background commands plan mode stopped ("+strings.Join(stopped, ", ")+") stay stopped; start again what the plan needs.")
	}
	if len(ro) > 0 {
		notes = append(notes, "the background commands started in plan mode ("+strings.Join(ro, ", ")+") keep running under the read-only walls they started with; stop and start one again to let it write.")
	}
	return notes
}

// over reports whether the job's command has returned; j.mu is held.
func (j *job) over() bool { return j.res != nil || j.err != nil }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
