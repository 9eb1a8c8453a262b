package checkpoint

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxNamed bounds the paths one note names.
const maxNamed = 5

// ownChanges keeps, of changes found in a command's window, those the
// command asked to write (wrote: the sandbox's own view, paths as the
// roots name them) and the ones beneath a directory it created, removed
// or renamed (the set names the directory; what moved or vanished with
// it is found by the scan). Every other change is someone else's: taken
// into the reference now, as a change between calls is, and named in a
// note, unless another call of this session is still running, whose own
// end then judges it. Called with s.mu held; sets s.man.
func (s *Store) ownChanges(changes []Change, now map[string]State, wrote []string) []Change {
	mine := ownRule(changes, wrote)
	var own []Change
	var others []string
	next := now
	if s.live > 0 {
		// Another call of this session is in flight: what is not this
		// call's may be that one's, so it is left for its end to find.
		next = make(map[string]State, len(now))
		for p, st := range now {
			next[p] = st
		}
	}
	for _, c := range changes {
		if mine(c) {
			own = append(own, c)
			continue
		}
		if s.live > 0 {
			if c.Before.Kind == "absent" {
				delete(next, c.Path)
			} else {
				next[c.Path] = c.Before
			}
			continue
		}
		others = append(others, c.Path)
	}
	s.man = next
	if len(others) > 0 {
		// Said each time: the same file edited again is news again.
		n := othersNote(s.roots, others)
		s.notes = append(s.notes, n)
		if s.Notify != nil {
			s.Notify(n)
		}
	}
	return own
}

// writesPath is where a call in flight's write journal is kept, beside
// its marker: running/<session>.writes.
func writesPath(journal string) string { return markerPath(journal) + ".writes" }

// openWriteJournal starts the write journal of the call beginning now
// (one call in flight has one: a second command at the same time gets
// none, and its record is the scan's). nil when it cannot be made.
func (s *Store) openWriteJournal() *os.File {
	if s.live > 1 {
		return nil
	}
	f, err := os.OpenFile(writesPath(s.dir), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// readWriteJournal is what a killed call's command was seen asking to
// write, from its journal: known only when the journal is there, whole
// (a "null" line: the set became unknown) and of this call (written
// after the call began).
func readWriteJournal(journal string, m marker) (paths []string, known bool) {
	f, err := os.Open(writesPath(journal))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.ModTime().Before(m.Start.Add(-clockSlack)) {
		return nil, false // an earlier call's
	}
	r := bufio.NewReader(io.LimitReader(f, 8<<20))
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			// A last line without its end was being written when the
			// kill came: its call had not gone on yet, so it wrote
			// nothing, and the set so far stands.
			return paths, err == io.EOF
		}
		var p *string
		if json.Unmarshal(line, &p) != nil || p == nil {
			return nil, false // damaged, or the set became unknown
		}
		paths = append(paths, *p)
	}
}

// ownOf keeps of changes those ownRule gives the call that wrote wrote.
func ownOf(changes []Change, wrote []string) []Change {
	mine := ownRule(changes, wrote)
	var own []Change
	for _, c := range changes {
		if mine(c) {
			own = append(own, c)
		}
	}
	return own
}

// ownRule says which of changes are the call's that asked to write
// wrote: a path in the set, or one beneath a directory in it that
// appeared, vanished or changed kind (mkdir, rm, mv of a directory).
func ownRule(changes []Change, wrote []string) func(Change) bool {
	set := make(map[string]bool, len(wrote))
	for _, p := range wrote {
		set[filepath.Clean(p)] = true
	}
	moved := map[string]bool{}
	for _, c := range changes {
		if set[c.Path] && c.Before.Kind != c.After.Kind && (c.Before.Kind == "dir" || c.After.Kind == "dir") {
			moved[c.Path] = true
		}
	}
	return func(c Change) bool { return set[c.Path] || beneathAny(moved, c.Path) }
}

// beneathAny reports whether a directory above p is in dirs.
func beneathAny(dirs map[string]bool, p string) bool {
	if len(dirs) == 0 {
		return false
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if dirs[d] {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// othersNote names changes someone else made while a command ran.
func othersNote(roots, paths []string) string {
	var names []string
	for i, p := range paths {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(paths)-maxNamed))
			break
		}
		names = append(names, shortPath(roots, p))
	}
	return "checkpoints: changed meanwhile by someone else, not by the agent's command, so undo leaves it alone: " + strings.Join(names, ", ")
}
