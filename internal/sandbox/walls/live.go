package walls

import (
	"sync"
	"sync/atomic"
)

// Live holds a session's current Policy. The rules change mid-session
// (Refresh adopts a repository a command made, Keep uncovers the spill
// directory, plan mode, the sandbox's private /tmp); each change builds a
// new snapshot from the current one and publishes it whole. The rule for
// every reader: take one snapshot (Policy) per decision and read every
// list from it, so no decision sees half of a change.
type Live struct {
	cur atomic.Pointer[Policy]
	mu  sync.Mutex // serialises changes: each builds on the last published
	// tree is the watch Refresh looks again with (treewatch.go): session
	// state, not a rule.
	tree *treeWatch
}

// NewLive starts a session's Live at p. Each Live has its own copy of the
// watch NewPolicy's scan filled: two sessions from one policy do not take
// each other's findings.
func NewLive(p *Policy) *Live {
	l := &Live{tree: p.seed.clone()}
	l.cur.Store(p)
	return l
}

// Policy is the current snapshot.
func (l *Live) Policy() *Policy { return l.cur.Load() }

func (l *Live) change(f func(next *Policy)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.cur.Load().clone()
	f(next)
	l.cur.Store(next)
}

// Refresh publishes a snapshot with what appeared in the writable roots
// since the last look read-only (Policy.refresh) and returns it. The
// sandbox calls it after every command, WriteFile after every write; the
// backends mount the new carve-outs before the next command (the
// snapshot's Generation grew).
func (l *Live) Refresh() []Finding {
	l.mu.Lock()
	defer l.mu.Unlock()
	next, found := l.cur.Load().refresh(l.tree)
	l.cur.Store(next)
	return found
}

// Keep makes path, beneath a hidden directory, readable again (the
// session's own spill directory, made after the sandbox opened): commands
// see it from the next launcher on, the file tools at once.
func (l *Live) Keep(path string) { l.change(func(p *Policy) { p.keep(path) }) }

// SetProjectReadOnly turns plan mode (planmode.go) on or off for what
// starts from now on; what already runs keeps its walls, so the session
// stops or restarts it (extend.Modes and its followers).
func (l *Live) SetProjectReadOnly(on bool) { l.change(func(p *Policy) { p.projectRO = on }) }

// SetTempDir names the host path of the session's private /tmp (the
// sandbox, as it opens), so the gate sees links commands plant there.
func (l *Live) SetTempDir(dir string) { l.change(func(p *Policy) { p.tempDir = dir }) }

// WriteFile writes path through the current snapshot (Policy.writeFile),
// then refreshes: a write may have made a path git would act on.
func (l *Live) WriteFile(path string, data []byte) (WriteResult, error) {
	res, err := l.Policy().writeFile(path, data)
	if err == nil {
		res.Found = l.Refresh()
	}
	return res, err
}

// Source gives the snapshot to decide with: a Live its current one, a
// Policy itself (rules that never change). The gate holds one.
type Source interface{ Policy() *Policy }

// Policy is p itself: a snapshot is a Source whose rules never change.
func (p *Policy) Policy() *Policy { return p }
