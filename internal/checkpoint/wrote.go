package checkpoint

import (
	"fmt"
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
	set := make(map[string]bool, len(wrote))
	for _, p := range wrote {
		set[filepath.Clean(p)] = true
	}
	// Directories the call made appear, vanish or change kind.
	moved := map[string]bool{}
	for _, c := range changes {
		if set[c.Path] && c.Before.Kind != c.After.Kind && (c.Before.Kind == "dir" || c.After.Kind == "dir") {
			moved[c.Path] = true
		}
	}
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
		if set[c.Path] || beneathAny(moved, c.Path) {
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
