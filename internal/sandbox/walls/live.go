package walls

import (
	"sync"
	"sync/atomic"
)

// Live holds a session's current Policy. The rules change mid-session
// (Refresh adopts a repository a command made, Keep uncovers the spill
// directory, plan mode makes the project read-only, the sandbox names its
// private /tmp); each change builds a new snapshot from the current one
// and publishes it whole, so a reader that took a snapshot keeps a
// consistent set of rules for its whole decision, and a reader that takes
// one after the change sees all of it.
//
// The rule for every reader: take one snapshot (Policy) per decision and
// read every list from it.
type Live struct {
	cur atomic.Pointer[Policy]
	// mu serialises changes: each builds on the snapshot the last one
	// published, so none is lost.
	mu sync.Mutex
	// tree is the watch Refresh looks again with (treewatch.go): session
	// state, not a rule.
	tree *treeWatch
}

// NewLive starts a session's Live at p (the policy NewPolicy computed).
// Each Live watches the tree on its own: two sessions from one policy do
// not take each other's findings.
func NewLive(p *Policy) *Live {
	l := &Live{tree: p.seed.clone()}
	l.cur.Store(p)
	return l
}

// Policy is the current snapshot.
func (l *Live) Policy() *Policy { return l.cur.Load() }

// change publishes f applied to the current snapshot.
func (l *Live) change(f func(*Policy) *Policy) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.Store(f(l.cur.Load()))
}

// Refresh looks again through the writable roots for repositories,
// .git pointer files, the gitdirs they name, bare-repository-shaped
// directories and hooks paths that appeared since the last look (see
// Policy.refresh), publishes a snapshot with each of them read-only, and
// returns them. The sandbox calls it after every command, WriteFile after
// every write; the backends put the new carve-outs up before the next
// command (the snapshot's Generation grew).
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
func (l *Live) Keep(path string) {
	l.change(func(p *Policy) *Policy { return p.withKeep(path) })
}

// SetProjectReadOnly turns the read-only walls on or off for what runs
// from now on (planmode.go); a command already running keeps the walls it
// started with, so the session stops or restarts those (extend.Modes and
// its followers).
func (l *Live) SetProjectReadOnly(on bool) {
	l.change(func(p *Policy) *Policy {
		next := p.clone()
		next.projectRO = on
		return next
	})
}

// SetTempDir names the host path of the session's private /tmp; the
// sandbox calls it when it made one, so the permission gate sees through
// a link a command planted there.
func (l *Live) SetTempDir(dir string) {
	l.change(func(p *Policy) *Policy {
		next := p.clone()
		next.tempDir = dir
		return next
	})
}

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
// Policy itself (rules that never change: a test's, a one-shot command's).
// Holders that outlive a change of rules (the permission gate) hold a
// Source and ask it once per decision.
type Source interface{ Policy() *Policy }

// Policy is p itself: a snapshot is a Source whose rules never change.
func (p *Policy) Policy() *Policy { return p }
