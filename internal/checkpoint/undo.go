package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Selection says which checkpoints to undo: the last call, the last
// turn, or every turn from FromTurn on.
type Selection struct {
	LastCall bool
	FromTurn int // 0: the last turn that changed anything
}

// Result is what an undo did, or (DryRun) would do.
type Result struct {
	Undone    []int    // the seqs undone
	Restored  []string // paths set back
	Conflicts []string // paths changed since the agent left them: left alone (unless Force)
	Lost      []string // paths whose old content was not kept
	Turns     []int
}

// Options of an undo.
type Options struct {
	DryRun bool
	// Force overwrites conflicts: paths someone changed after the agent.
	Force bool
}

// Entries lists a store's checkpoints that are still in effect (not
// undone), oldest first.
func Entries(dir string) ([]Entry, error) {
	all, err := readJournal(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	undone := map[int]bool{}
	for _, e := range all {
		for _, n := range e.Undo {
			undone[n] = true
		}
	}
	var out []Entry
	for _, e := range all {
		if e.Tool != "undo" && !undone[e.Seq] && len(e.Changes) > 0 {
			out = append(out, e)
		}
	}
	return out, nil
}

// Undo restores what the selected checkpoints in dir changed, newest
// first, leaving alone (and reporting) every path that no longer holds
// what the agent left, and records the undo in the journal. It works on
// a store no process has open (harness undo after the session, or after
// a crash) as on the live one (Store.Undo).
func Undo(dir string, sel Selection, o Options) (Result, error) {
	entries, err := Entries(dir)
	if err != nil {
		return Result{}, err
	}
	var picked []Entry
	switch {
	case len(entries) == 0:
	case sel.LastCall:
		picked = entries[len(entries)-1:]
	default:
		from := sel.FromTurn
		if from == 0 {
			from = entries[len(entries)-1].Turn
		}
		for _, e := range entries {
			if e.Turn >= from {
				picked = append(picked, e)
			}
		}
	}
	var res Result
	if len(picked) == 0 {
		return res, nil
	}
	// Per path: what the agent left last (to check nobody changed it since)
	// and what it was before the first picked change (to restore).
	last := map[string]State{}
	first := map[string]State{}
	turns := map[int]bool{}
	for i := len(picked) - 1; i >= 0; i-- {
		e := picked[i]
		turns[e.Turn] = true
		res.Undone = append(res.Undone, e.Seq)
		for _, c := range e.Changes {
			if _, ok := last[c.Path]; !ok {
				last[c.Path] = c.After
			}
			first[c.Path] = c.Before
		}
	}
	for t := range turns {
		res.Turns = append(res.Turns, t)
	}
	sort.Ints(res.Turns)
	sort.Ints(res.Undone)
	paths := make([]string, 0, len(first))
	for p := range first {
		paths = append(paths, p)
	}
	// Removals deepest first, then creations shallowest first.
	sort.Slice(paths, func(i, j int) bool {
		ri, rj := first[paths[i]].Kind == "absent", first[paths[j]].Kind == "absent"
		if ri != rj {
			return ri
		}
		di, dj := strings.Count(paths[i], string(filepath.Separator)), strings.Count(paths[j], string(filepath.Separator))
		if ri {
			return di > dj || di == dj && paths[i] > paths[j]
		}
		return di < dj || di == dj && paths[i] < paths[j]
	})
	var applied []Change
	for _, p := range paths {
		want, left := first[p], last[p]
		now := current(p)
		if !matches(dir, now, left) && !o.Force {
			if matches(dir, now, want) {
				continue // already as it was
			}
			res.Conflicts = append(res.Conflicts, p)
			continue
		}
		if want.Kind == "file" && want.Blob == "" {
			res.Lost = append(res.Lost, p)
			continue
		}
		if o.DryRun {
			res.Restored = append(res.Restored, p)
			continue
		}
		if err := restore(dir, p, want); err != nil {
			res.Conflicts = append(res.Conflicts, p+" ("+err.Error()+")")
			continue
		}
		res.Restored = append(res.Restored, p)
		applied = append(applied, Change{Path: p, Before: left, After: want})
	}
	if !o.DryRun {
		all, _ := readJournal(dir)
		seq := 0
		for _, e := range all {
			seq = max(seq, e.Seq)
		}
		// The checkpoints count as undone only when nothing was left in
		// conflict: an undo again (or with Force) then finishes the job.
		var done []int
		if len(res.Conflicts) == 0 {
			done = res.Undone
		}
		if err := appendJournal(dir, Entry{Seq: seq + 1, Tool: "undo", Time: time.Now().UTC(), Undo: done, Changes: applied}); err != nil {
			return res, fmt.Errorf("recording the undo: %w", err)
		}
	}
	return res, nil
}

// current is what p holds now, hashed.
func current(p string) State {
	st, err := os.Lstat(p)
	if err != nil {
		return State{Kind: "absent"}
	}
	switch {
	case st.IsDir():
		return State{Kind: "dir", Mode: st.Mode().Perm()}
	case st.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(p)
		return State{Kind: "symlink", Target: t}
	case !st.Mode().IsRegular():
		return State{Kind: "other", Mode: st.Mode()}
	}
	s := State{Kind: "file", Mode: st.Mode().Perm(), Size: st.Size()}
	if st.Size() <= MaxFile {
		if f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0); err == nil {
			h := sha256.New()
			io.Copy(h, f)
			f.Close()
			s.Blob = hex.EncodeToString(h.Sum(nil))
		}
	}
	return s
}

// matches reports whether now is the state want describes.
func matches(dir string, now, want State) bool {
	if now.Kind != want.Kind {
		return false
	}
	switch now.Kind {
	case "absent":
		return true
	case "dir":
		return now.Mode == want.Mode
	case "symlink":
		return now.Target == want.Target
	case "file":
		if now.Mode != want.Mode || now.Size != want.Size {
			return false
		}
		return want.Blob == "" || now.Blob == want.Blob
	}
	return false
}

// restore sets p to want, never writing through a link planted there.
func restore(dir, p string, want State) error {
	switch want.Kind {
	case "absent":
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if st.IsDir() {
			return os.Remove(p) // empty once its own changes are undone; else kept
		}
		return os.Remove(p)
	case "dir":
		if st, err := os.Lstat(p); err == nil && !st.IsDir() {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		return os.Chmod(p, want.Mode)
	case "symlink":
		if err := removeNonDir(p); err != nil {
			return err
		}
		return os.Symlink(want.Target, p)
	case "file":
		data, err := os.ReadFile(filepath.Join(blobDir(dir), want.Blob))
		if err != nil {
			return fmt.Errorf("its old content is missing from the checkpoints: %w", err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want.Blob {
			return errors.New("its kept content is damaged")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			return errors.New("a directory stands there now")
		}
		tmp, err := os.CreateTemp(filepath.Dir(p), ".harness-undo-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		if _, err := io.Copy(tmp, bytes.NewReader(data)); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Chmod(tmp.Name(), want.Mode); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), p)
	}
	return fmt.Errorf("cannot restore a %s", want.Kind)
}

func removeNonDir(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		return errors.New("a directory stands there now")
	}
	return os.Remove(p)
}

// Undo undoes in the live store and takes the result as the reference.
func (s *Store) Undo(sel Selection, o Options) (Result, error) {
	if s == nil {
		return Result{}, errors.New("undo is off for this session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.man == nil {
		return Undo(s.dir, sel, o) // no call wrote yet in this process
	}
	s.man = s.scan(s.man)
	res, err := Undo(s.dir, sel, o)
	s.man = s.scan(s.man)
	return res, err
}

// UndoTurns undoes the files of the last n user turns of this store
// (the conversation's /rewind N takes the same turns back).
func (s *Store) UndoTurns(n int, o Options) (Result, error) {
	if s == nil {
		return Result{}, nil
	}
	s.mu.Lock()
	from := s.turn - n + 1
	s.mu.Unlock()
	if from < 1 {
		from = 1
	}
	return s.Undo(Selection{FromTurn: from}, o)
}

// Describe says a result in a few lines for the user.
func (r Result) Describe(roots []string) string {
	var b strings.Builder
	switch {
	case len(r.Undone) == 0:
		return "nothing to undo: no checkpoint changed any file"
	case len(r.Restored) == 0 && len(r.Conflicts) == 0:
		fmt.Fprintf(&b, "the files are already as they were before turn %v", r.Turns)
	default:
		fmt.Fprintf(&b, "restored %d path(s) to before turn(s) %v", len(r.Restored), r.Turns)
		for _, p := range r.Restored {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	if len(r.Conflicts) > 0 {
		b.WriteString("\nnot restored, changed since the agent left them (undo --force overwrites them):")
		for _, p := range r.Conflicts {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	if len(r.Lost) > 0 {
		b.WriteString("\nnot restored, their old content was too big to keep:")
		for _, p := range r.Lost {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	return b.String()
}
