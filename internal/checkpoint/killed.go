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
// (running/<session>) outlives the kill and says when it began, so the
// next Open of the session, or an undo from another process, records it
// after the fact (recoverKilled): every path the journal knows whose
// state is no longer what the journal last left, and that changed after
// the call began, is the killed call's change, from the journal's state.
// A path the journal never saw has no known old state and is not
// recorded; a change made before the call began stays someone else's.

// recoverKilled journals the change of a call of journal's session that
// was killed mid-way, once its process is gone, and drops the marker.
func recoverKilled(journal string) {
	p := filepath.Join(runningDir(journal), sessionOf(journal))
	b, err := os.ReadFile(p)
	var m marker
	if err != nil || json.Unmarshal(b, &m) != nil || alive(m.PID) {
		return // none, or the session (this process too) is still at work
	}
	entries, err := readJournal(journal)
	if err != nil && !os.IsNotExist(err) {
		if _, ok := err.(*DamagedJournalError); !ok {
			return
		}
	}
	known := map[string]State{}
	rootOf := map[string]string{}
	seq := 0
	for _, e := range entries {
		seq = max(seq, e.Seq)
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
	if len(changes) > 0 {
		sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
		var roots []string
		for _, e := range entries {
			if len(e.Roots) > 0 {
				roots = e.Roots
			}
		}
		e := Entry{Seq: seq + 1, Turn: m.Turn, Tool: m.Tool, CallID: m.CallID, Start: m.Start, Time: time.Now().UTC(),
			Killed: true, Changes: changes, Roots: roots}
		if appendJournal(journal, e) != nil {
			return // keep the marker: the next look tries again
		}
	}
	os.Remove(p)
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
