package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
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
	// Shared are paths another session of the project may have changed
	// in the same moment, with whose: left alone (unless Force).
	Shared []string
	Lost   []string // paths whose old content was not kept
	// Refused are paths undo would not touch, with why: outside the roots
	// the checkpoint covered, or reached only through a symlink now.
	Refused []string
	// Unknown are changes undo could not know of (a journal line a kill
	// cut short), said so the user checks them.
	Unknown []string
	Turns   []int
}

// Options of an undo.
type Options struct {
	DryRun bool
	// Force overwrites conflicts: paths someone changed after the agent.
	Force bool
	// Roots confine the undo of checkpoints that do not record their own
	// roots (journals written before they did): a path beneath none of
	// them is refused.
	Roots []string
}

// Entries lists a store's checkpoints that are still in effect (not
// undone), oldest first.
//
// A damaged journal (DamagedJournalError) still lists its good entries,
// with the error beside them.
func Entries(dir string) ([]Entry, error) {
	all, err := readJournal(dir)
	var dmg *DamagedJournalError
	switch {
	case errors.As(err, &dmg):
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, err
	default:
		err = nil
	}
	undone := map[int]bool{}
	for _, e := range all {
		for _, n := range e.Undo {
			undone[n] = true
		}
	}
	var out []Entry
	for _, e := range all {
		if !e.damaged && e.Tool != "undo" && !undone[e.Seq] && len(e.Changes) > 0 {
			out = append(out, e)
		}
	}
	return out, err
}

// Undo restores what the selected checkpoints in dir changed, newest
// first, leaving alone (and reporting) every path that no longer holds
// what the agent left, and records the undo in the journal. It works on
// a store no process has open (harness undo after the session, or after
// a crash) as on the live one (Store.Undo).
func Undo(dir string, sel Selection, o Options) (Result, error) {
	if !o.DryRun {
		recoverKilled(dir)
	}
	entries, err := Entries(dir)
	var dmg *DamagedJournalError
	if err != nil && !errors.As(err, &dmg) {
		return Result{}, err
	}
	picked := pick(entries, sel)
	var res Result
	if dmg != nil {
		if err := acrossDamage(dmg, picked, &res); err != nil {
			return res, err
		}
	}
	if len(picked) == 0 {
		return res, nil
	}
	pl := planUndo(dir, picked, o, &res)
	applied := pl.apply(dir, o, &res)
	if !o.DryRun {
		if err := recordUndo(dir, &res, applied); err != nil {
			return res, err
		}
	}
	return res, nil
}

// pick selects the entries sel names, oldest first.
func pick(entries []Entry, sel Selection) []Entry {
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
	return picked
}

// acrossDamage refuses an undo across a damaged journal line, and notes a
// torn last one in res.
func acrossDamage(dmg *DamagedJournalError, picked []Entry, res *Result) error {
	if dmg != nil {
		// A damaged line after the first checkpoint to undo may have held
		// a change (or an undo) inside the range: restoring around it
		// could undo half a turn and call it done. Refuse, and say why.
		from := 0
		if len(picked) > 0 {
			from = picked[0].line
		}
		for _, n := range dmg.Lines {
			if len(picked) == 0 || n > from {
				return fmt.Errorf("%w; undo restores nothing across it (undo a later turn with --turn, or restore those files by hand)", dmg)
			}
		}
		// A torn last line is the newest call's record, cut by a kill:
		// undo what was recorded, and say that call's changes may stay.
		if dmg.Torn > 0 {
			res.Unknown = append(res.Unknown, "the last call before harness was killed: its record was cut short, so what it changed is not undone (check the files it worked on)")
		}
	}
	return nil
}

// undoPlan is, per path, what the agent left last (to check nobody
// changed it since), what it was before the first picked change (to
// restore), the root it lies beneath ("": none it may touch), and the
// other sessions that may have made it.
type undoPlan struct {
	last, first map[string]State
	rootOf      map[string]string
	shared      map[string][]string
	paths       []string // in the order to restore
}

func planUndo(dir string, picked []Entry, o Options, res *Result) *undoPlan {
	last, first := map[string]State{}, map[string]State{}
	rootOf, shared := map[string]string{}, map[string][]string{}
	turns := map[int]bool{}
	peers := newPeerRecords(dir)
	for i := len(picked) - 1; i >= 0; i-- {
		e := picked[i]
		turns[e.Turn] = true
		res.Undone = append(res.Undone, e.Seq)
		roots := e.Roots
		if len(roots) == 0 {
			roots = o.Roots
		}
		for _, c := range e.Changes {
			if len(c.Shared) > 0 && !o.Force {
				if ids := peers.stillShared(e, c); len(ids) > 0 {
					shared[c.Path] = append(shared[c.Path], ids...)
				}
			}
			if _, ok := last[c.Path]; !ok {
				last[c.Path] = c.After
			}
			first[c.Path] = c.Before
			if r, ok := rootOf[c.Path]; !ok || r != "" {
				root, _, ok := walls.Under(roots, c.Path)
				if !ok {
					root = ""
				}
				rootOf[c.Path] = root
			}
		}
	}
	for t := range turns {
		res.Turns = append(res.Turns, t)
	}
	sort.Ints(res.Turns)
	sort.Ints(res.Undone)
	return &undoPlan{last: last, first: first, rootOf: rootOf, shared: shared, paths: restoreOrder(first)}
}

// restoreOrder is the order to set paths back to first: removals deepest
// first, then creations shallowest first.
func restoreOrder(first map[string]State) []string {
	paths := make([]string, 0, len(first))
	for p := range first {
		paths = append(paths, p)
	}
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
	return paths
}

// apply restores each path of the plan that still holds what the agent
// left, noting the rest in res; it returns what it changed.
func (pl *undoPlan) apply(dir string, o Options, res *Result) []Change {
	first, last, rootOf, shared := pl.first, pl.last, pl.rootOf, pl.shared
	var applied []Change
	for _, p := range pl.paths {
		want, left := first[p], last[p]
		root := rootOf[p]
		if root == "" {
			res.Refused = append(res.Refused, p+" (outside the roots the checkpoint covered)")
			continue
		}
		if ids := shared[p]; len(ids) > 0 {
			slices.Sort(ids)
			res.Shared = append(res.Shared, p+" (session "+strings.Join(slices.Compact(ids), ", ")+" was running a command at the same time)")
			continue
		}
		rel, _ := filepath.Rel(root, p)
		now, err := current(root, rel)
		if err != nil {
			res.Refused = append(res.Refused, p+" ("+unsafe(root, err)+")")
			continue
		}
		if !matches(now, left) && !o.Force {
			if matches(now, want) {
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
		if err := restore(dir, root, rel, want); err != nil {
			res.Refused = append(res.Refused, p+" ("+unsafe(root, err)+")")
			continue
		}
		res.Restored = append(res.Restored, p)
		applied = append(applied, Change{Path: p, Before: left, After: want})
	}
	return applied
}

// recordUndo journals the undo: the checkpoints count as undone only when
// nothing was left in conflict, so an undo again (or with Force) then
// finishes the job.
func recordUndo(dir string, res *Result, applied []Change) error {
	all, _ := readJournal(dir)
	seq := 0
	for _, e := range all {
		seq = max(seq, e.Seq)
	}
	var done []int
	if len(res.Conflicts) == 0 && len(res.Refused) == 0 && len(res.Shared) == 0 {
		done = res.Undone
	}
	if err := appendJournal(dir, Entry{Seq: seq + 1, Tool: "undo", Time: time.Now().UTC(), Undo: done, Changes: applied}); err != nil {
		return fmt.Errorf("recording the undo: %w", err)
	}
	return nil
}

// current is what rel beneath root holds now, hashed; an error when a
// directory on the way is a symlink (or root cannot be opened): then
// what the path holds cannot be known without following it.
func current(root, rel string) (State, error) {
	rd, err := walls.OpenDir(root)
	if err != nil {
		return State{}, err
	}
	defer rd.Close()
	if rel == "." {
		st, err := rd.Stat()
		if err != nil {
			return State{}, err
		}
		return State{Kind: "dir", Mode: st.Mode().Perm()}, nil
	}
	parent, err := rd.OpenPath(filepath.Dir(rel), false, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, walls.ErrNotDir) {
		return State{Kind: "absent"}, nil
	}
	if err != nil {
		return State{}, err
	}
	defer parent.Close()
	name := filepath.Base(rel)
	st, err := parent.Lstat(name)
	if err != nil {
		return State{Kind: "absent"}, nil
	}
	switch {
	case st.IsDir():
		return State{Kind: "dir", Mode: st.Mode().Perm()}, nil
	case st.Mode()&fs.ModeSymlink != 0:
		t, _ := parent.Readlink(name)
		return State{Kind: "symlink", Target: t}, nil
	case !st.Mode().IsRegular():
		return State{Kind: "other", Mode: st.Mode()}, nil
	}
	s := State{Kind: "file", Mode: st.Mode().Perm(), Size: st.Size()}
	if st.Size() <= MaxFile {
		if f, _, err := parent.OpenFile(name, st); err == nil {
			h := sha256.New()
			io.Copy(h, io.LimitReader(f, MaxFile+1))
			f.Close()
			s.Blob = hex.EncodeToString(h.Sum(nil))
		}
	}
	return s, nil
}

// matches reports whether now is the state want describes.
func matches(now, want State) bool {
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

// restore sets rel beneath root to want. Every directory on the way is
// opened relative to the one before it, never through a symlink, and the
// last step is done relative to its parent's descriptor: a link planted
// anywhere on the path makes the restore fail (walls.ErrSymlink), it is
// never written, removed or chmodded through.
func restore(dir, root, rel string, want State) error {
	rd, err := walls.OpenDir(root)
	if err != nil {
		return err
	}
	defer rd.Close()
	if rel == "." {
		if want.Kind != "dir" {
			return fmt.Errorf("%s is a writable root: undo only restores its mode", root)
		}
		return rd.Chmod(want.Mode)
	}
	var data []byte
	if want.Kind == "file" {
		// The blobs are harness's own state, beside the journal.
		data, err = walls.ReadFileNoFollow(filepath.Join(blobDir(dir), want.Blob), MaxFile)
		if err != nil {
			return fmt.Errorf("its old content is missing from the checkpoints: %w", err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want.Blob {
			return errors.New("its kept content is damaged")
		}
	}
	parent, err := rd.OpenPath(filepath.Dir(rel), want.Kind != "absent", 0o755)
	if want.Kind == "absent" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, walls.ErrNotDir)) {
		return nil // no parent, no path
	}
	if err != nil {
		return err
	}
	defer parent.Close()
	name := filepath.Base(rel)
	fi, lerr := parent.Lstat(name)
	exists := lerr == nil
	switch want.Kind {
	case "absent":
		if !exists {
			return nil
		}
		if fi.IsDir() {
			return parent.RemoveDir(name) // empty once its own changes are undone; else kept
		}
		return parent.Remove(name)
	case "dir":
		if exists && !fi.IsDir() {
			if err := parent.Remove(name); err != nil {
				return err
			}
			exists = false
		}
		if !exists {
			if err := parent.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
		sub, err := parent.Sub(name)
		if err != nil {
			return err
		}
		defer sub.Close()
		return sub.Chmod(want.Mode)
	case "symlink":
		if exists {
			if fi.IsDir() {
				return errors.New("a directory stands there now")
			}
			if err := parent.Remove(name); err != nil {
				return err
			}
		}
		return parent.Symlink(want.Target, name)
	case "file":
		if exists && fi.IsDir() {
			return errors.New("a directory stands there now")
		}
		tmp, tmpName, err := parent.CreateTemp(".harness-undo-")
		if err != nil {
			return err
		}
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Chmod(want.Mode) // fchmod: the temporary file itself
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = parent.Rename(tmpName, name)
		}
		if err != nil {
			parent.Remove(tmpName)
		}
		return err
	}
	return fmt.Errorf("cannot restore a %s", want.Kind)
}

// unsafe says, for the user, why a path beneath root was not restored.
func unsafe(root string, err error) string {
	var le *walls.LinkError
	if errors.As(err, &le) {
		p := le.Path
		if rel, rerr := filepath.Rel(root, p); rerr == nil && filepath.IsLocal(rel) {
			p = rel
		}
		return p + " is a symlink now, and undo never follows one: move it away and undo again"
	}
	return err.Error()
}

// Undo undoes in the live store and takes the result as the reference.
func (s *Store) Undo(sel Selection, o Options) (Result, error) {
	if s == nil {
		return Result{}, errors.New("undo is off for this session")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(o.Roots) == 0 {
		o.Roots = s.roots
	}
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
	case len(r.Restored) == 0 && len(r.Conflicts) == 0 && len(r.Refused) == 0 && len(r.Shared) == 0:
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
	if len(r.Shared) > 0 {
		b.WriteString("\nnot restored, another session of this project may have made these changes (undo --force restores them anyway):")
		for _, p := range r.Shared {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	if len(r.Refused) > 0 {
		b.WriteString("\nnot restored, undo cannot do it safely:")
		for _, p := range r.Refused {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	if len(r.Lost) > 0 {
		b.WriteString("\nnot restored, their old content was too big to keep:")
		for _, p := range r.Lost {
			b.WriteString("\n  " + shortPath(roots, p))
		}
	}
	for _, u := range r.Unknown {
		b.WriteString("\nnot known to undo: " + u)
	}
	return b.String()
}

// ParseUndoWords reads the words of the /undo command (chat and ACP
// alike): "call" undoes only the last call, "--force" overwrites files
// changed since.
func ParseUndoWords(arg string) (Selection, Options, error) {
	sel, o := Selection{}, Options{}
	for _, a := range strings.Fields(arg) {
		switch a {
		case "call":
			sel.LastCall = true
		case "--force":
			o.Force = true
		default:
			return sel, o, fmt.Errorf("/undo takes call or --force, not %q", a)
		}
	}
	return sel, o, nil
}
