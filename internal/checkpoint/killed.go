package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// A call harness was killed in never reaches the journal: its end never
// ran. What it changed would then look like someone else's change, and
// undo would call the agent's own last change a conflict. Its marker
// (running/<session>) outlives the kill and says when it began and, by
// its last heartbeat, when its process last lived, so the next Open of
// the session, or an undo from another process, records it after the
// fact (recoverKilled). With the state file (state.go) that record is
// exact about where the call started from: what changed since the tree
// the call began with, and changed while the call lived, is its change,
// files it created included, less what another session's record claims
// (others.go, as for any call). Without one (a process killed in its
// first call before the state was saved) it falls back to the paths the
// journal knows: each whose state is no longer what the journal last
// left and that changed after the call began; a path the journal never
// saw has no known old state there and is not recorded.

// recoverKilled journals the change of a call of journal's session that
// was killed mid-way, once its process is gone, and drops the marker.
func recoverKilled(journal string) {
	p := markerPath(journal)
	b, err := os.ReadFile(p)
	var m marker
	if err != nil || json.Unmarshal(b, &m) != nil || alive(m.PID) {
		return // none, or the session (this process too) is still at work
	}
	died, _ := lastAlive(p)
	entries, err := readJournal(journal)
	if err != nil && !os.IsNotExist(err) {
		if _, ok := err.(*DamagedJournalError); !ok {
			return
		}
	}
	seq := 0
	var roots []string
	recorded := false
	for _, e := range entries {
		seq = max(seq, e.Seq)
		if len(e.Roots) > 0 {
			roots = e.Roots
		}
		recorded = recorded || (m.CallID != "" && e.CallID == m.CallID && e.Tool != "undo")
	}
	if recorded {
		// Killed after its entry was written (by its end, or by an
		// earlier recovery killed in turn): nothing is left to record.
		os.Remove(p)
		os.Remove(writesPath(journal))
		return
	}
	changes, stateRoots, exact, saved, commit := killedFromState(journal, m, died)
	if !saved {
		changes = killedFromJournal(entries, m)
	} else if len(roots) == 0 {
		roots = stateRoots
	}
	if len(changes) > 0 {
		sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
		e := Entry{Seq: seq + 1, Turn: m.Turn, Tool: m.Tool, CallID: m.CallID, Start: m.Start, Time: died.UTC(),
			Exact: exact, Killed: true, Changes: changes, Roots: roots}
		if appendJournal(journal, e) != nil {
			return // keep the marker: the next look tries again
		}
	}
	if commit != nil {
		commit()
	}
	os.Remove(p)
	os.Remove(writesPath(journal))
}

// killedFromState is the killed call's change against the tree saved when
// it began: what changed since, while the call lived, that no other
// session's record claims; a file tool's, only its named paths. saved is
// false when there is no state to start from. commit saves the tree as
// found, once the change is journaled, so it is not recorded twice.
func killedFromState(journal string, m marker, died time.Time) (changes []Change, roots []string, exact, saved bool, commit func()) {
	base, roots, err := loadState(journal)
	if err != nil {
		return nil, nil, false, false, nil
	}
	tmp := &Store{dir: journal, roots: roots, noted: map[string]bool{}}
	tmp.used = dirSize(blobDir(journal))
	now := tmp.scan(base)
	for _, c := range diff(base, now) {
		if c.After.Kind != "absent" && !changedWithin(c.Path, m.Start, died) {
			continue // changed after the call's process was gone: not its change
		}
		changes = append(changes, c)
	}
	switch wrote, known := readWriteJournal(journal, m); {
	case len(m.Paths) > 0:
		// A file tool names what it writes. Killed before it wrote, its
		// window holds only others' changes: none of them is its own.
		if changes, exact = only(changes, m.Paths); !exact {
			changes = nil
		}
	case known:
		// The sandbox's own record of the command, up to the kill.
		changes, exact = ownOf(changes, wrote), true
	}
	changes = attribute(changes, tmp.peers(m.Start))
	return changes, roots, exact, true, func() { tmp.saveState(now) }
}

// killedFromJournal is the fallback without a saved state: every path the
// journal knows whose state is no longer what the journal last left, and
// that changed after the call began.
func killedFromJournal(entries []Entry, m marker) []Change {
	known := map[string]State{}
	rootOf := map[string]string{}
	for _, e := range entries {
		for _, c := range e.Changes {
			if c.Path == "" {
				continue // what is left of a damaged line
			}
			known[c.Path] = c.After
			if root, _, ok := walls.Under(e.Roots, c.Path); ok {
				rootOf[c.Path] = root
			}
		}
	}
	var changes []Change
	for path, want := range known {
		root := rootOf[path]
		if root == "" || !changedSince(path, m.Start) {
			continue
		}
		rel, _ := filepath.Rel(root, path)
		now, err := current(root, rel)
		if err != nil || matches(now, want) {
			continue
		}
		changes = append(changes, Change{Path: path, Before: want, After: now})
	}
	return changes
}

// changedWithin reports whether path changed between start and died (its
// change time; a path gone is judged by its directory's, which counts
// only from start: later changes beside it move that time on).
func changedWithin(path string, start, died time.Time) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return changedSince(path, start)
	}
	ct, ok := walls.ChangeTime(fi)
	if !ok {
		return true
	}
	return !ct.Before(start.Add(-clockSlack)) && (died.IsZero() || !ct.After(died))
}

// changedSince reports whether path (or, when it is gone, its directory)
// changed at or after t.
func changedSince(path string, t time.Time) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		fi, err = os.Lstat(filepath.Dir(path))
		if err != nil {
			return false
		}
	}
	ct, ok := walls.ChangeTime(fi)
	return !ok || !ct.Before(t.Add(-clockSlack))
}

// clockSlack allows for a file system clock a tick behind the wall clock
// the marker's time was read from.
const clockSlack = 20 * time.Millisecond
