package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/termsafe"
)

// Limits.
const (
	MaxFile  = 16 << 20 // a file larger than this is not kept (noted)
	MaxStore = 2 << 30  // no more versions once the blobs take this much
)

// skipDirs are not walked: rewritten by tools, large, or git's own (harness
// never touches .git; its history has its own protection).
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "target": true, "dist": true, "build": true,
	".venv": true, "venv": true, "__pycache__": true, ".cache": true, ".gradle": true,
	".next": true, ".nuxt": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
}

// State is what a path held: absent, a directory, a symlink (Target) or a
// regular file (Blob, its content's hash; empty when too big to keep).
type State struct {
	Kind   string      `json:"kind"` // "absent", "file", "dir", "symlink"
	Mode   fs.FileMode `json:"mode,omitempty"`
	Blob   string      `json:"blob,omitempty"`
	Size   int64       `json:"size,omitempty"`
	Target string      `json:"target,omitempty"`
	// NotKept says why the content was not kept (too big, store full).
	NotKept string `json:"not_kept,omitempty"`
	mtime   int64
	ino     uint64
	recent  bool // its time was within a clock tick of the scan: hash again next time
}

func (s State) same(o State) bool {
	return s.Kind == o.Kind && s.Mode == o.Mode && s.Target == o.Target && s.Size == o.Size &&
		(s.Blob == o.Blob || s.Blob == "" || o.Blob == "")
}

// Change is one path a call changed.
type Change struct {
	Path   string `json:"path"`
	Before State  `json:"before"`
	After  State  `json:"after"`
	// Shared names the other sessions of the project that may have made
	// this change (their calls ran at the same time: others.go).
	Shared []string `json:"shared,omitempty"`
}

// Entry is one checkpoint: a call and what it changed.
type Entry struct {
	Seq    int    `json:"seq"`
	Turn   int    `json:"turn"`
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	// Start is when the call began, Time when it ended.
	Start time.Time `json:"start,omitempty"`
	Time  time.Time `json:"time"`
	// Exact: the call wrote only the paths it named (a file tool), so
	// its changes are its own whatever else ran.
	Exact bool `json:"exact,omitempty"`
	// Attributed: the sandbox named what the command asked to write, and
	// only those paths are its changes (wrote.go).
	Attributed bool `json:"attributed,omitempty"`
	// Killed: harness was killed during the call; its change was
	// recorded after the fact (killed.go).
	Killed  bool     `json:"killed,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// Roots are the writable roots the store covered: undo touches
	// nothing beneath none of them.
	Roots []string `json:"roots,omitempty"`
	// Undone marks an entry a later undo restored (an entry of its own
	// that names the seqs it undid).
	Undo []int `json:"undo,omitempty"`

	line    int  // where readJournal found it
	damaged bool // a line that was not an entry (readJournal)
}

// Store is one session's checkpoints: its journal, and the blobs it
// shares with the project's other sessions (the same content is kept
// once).
type Store struct {
	mu    sync.Mutex
	dir   string // the journal's path
	roots []string
	man   map[string]State
	turn  int
	seq   int
	used  int64
	notes []string
	noted map[string]bool
	live  int           // calls in flight (running/<session> says so while > 0)
	beat  chan struct{} // closed when the last call in flight ends (the marker's heartbeat)
	// saved is the tree the state file holds, once this process wrote
	// it whole: later scans append what changed since (state.go).
	saved  map[string]State
	Notify func(string) // notes for the user (a file too big to keep)
}

// Journal is the path of a session's checkpoint journal, beside its log
// (sessionDir is the project's session directory); the blobs are in
// "blobs" next to it.
func Journal(sessionDir, sessionID string) string {
	return filepath.Join(sessionDir, "checkpoints", sessionID+".jsonl")
}

func blobDir(journal string) string { return filepath.Join(filepath.Dir(journal), "blobs") }

// Open starts (or, after a resume, continues) the store whose journal is
// at journal, for the writable roots, taking their current state as the
// reference.
func Open(journal string, roots ...string) (*Store, error) {
	// Nothing is written until a call that can write begins: a session
	// opened and left leaves nothing on disk, and the first Begin takes
	// the reference (what the roots hold before the agent's first write).
	dir := journal
	s := &Store{dir: dir, roots: roots, noted: map[string]bool{}}
	recoverKilled(dir)
	entries, _ := readJournal(dir)
	for _, e := range entries {
		if e.Seq > s.seq {
			s.seq = e.Seq
		}
		if e.Turn > s.turn {
			s.turn = e.Turn
		}
	}
	s.used = dirSize(blobDir(dir))
	return s, nil
}

// Notes lists what the store could not keep so far (a file too big), the
// ones from Open included, before any Notify was set.
func (s *Store) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

// StartTurn numbers the calls that follow as the next user turn.
func (s *Store) StartTurn() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn++
	return s.turn
}

// Begin is called before a call that can write; the function it returns,
// after it. Changes made between calls (by the user) become the new
// reference; changes made during the call are journaled, except what
// other sessions of the project made meanwhile (others.go). paths, for a
// file tool, are the only paths the call writes: a change anywhere else
// in its window is someone else's.
func (s *Store) Begin(callID, tool string, paths ...string) (end func()) {
	e := s.begin(callID, tool, paths)
	return func() { e(nil) }
}

// BeginCommand is Begin for a command: end is given what the sandbox saw
// it ask to write (sandbox.Result's Wrote, WroteKnown, WroteWhy). When
// that is known, a change found in the call's window is
// the call's only if its path, or a directory above it that the call
// created, removed or renamed, is in the set; every other change is
// someone else's (the user's, another process's): it becomes the new
// reference, as a change between calls does, and is named in a note,
// never journaled as this call's (wrote.go). When the set is unknown,
// every change in the window is the call's, as for Begin, and a note says
// why, once.
//
// journal, when not nil, is for the sandbox to write the set into as the
// command runs (sandbox.Cmd.WriteJournal): a harness killed mid-command
// leaves it behind, and the killed call's record is then as exact as a
// finished one's (killed.go). end closes it.
func (s *Store) BeginCommand(callID, tool string) (journal *os.File, end func(wrote []string, known bool, why string)) {
	e := s.begin(callID, tool, nil)
	journal = s.openWriteJournal()
	return journal, func(wrote []string, known bool, why string) {
		e(&written{paths: wrote, known: known, why: why})
		if journal != nil {
			journal.Close()
			os.Remove(journal.Name()) // the journal's record is in it now
		}
	}
}

// written is what the sandbox saw a command ask to write
// (sandbox.Result's Wrote, WroteKnown, WroteWhy).
type written struct {
	paths []string
	known bool
	why   string
}

func (s *Store) begin(callID, tool string, paths []string) (end func(*written)) {
	s.mu.Lock()
	if err := os.MkdirAll(blobDir(s.dir), 0o700); err != nil {
		s.note("checkpoints: " + err.Error() + "; undo will not cover this session's changes")
	}
	s.man = s.scan(s.man)
	s.saveState(s.man)
	start := time.Now().UTC()
	s.live++
	s.mark(&marker{PID: os.Getpid(), Start: start, Paths: paths, CallID: callID, Tool: tool, Turn: s.turn})
	if s.live == 1 {
		s.beat = make(chan struct{})
		startBeat(markerPath(s.dir), s.beat)
	}
	s.mu.Unlock()
	return func(w *written) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.live--; s.live == 0 {
			close(s.beat)
			defer s.mark(nil)
		}
		now := s.scan(s.man)
		changes := diff(s.man, now)
		// The state is saved after the entry: killed between the two,
		// the marker and the entry stand, and recovery sees the call
		// recorded (recoverKilled). Saved first, a kill before the entry
		// lost the call's change: the state already held it.
		defer s.saveState(now)
		exact, attributed := false, false
		if len(paths) > 0 {
			s.man = now
			changes, exact = only(changes, paths)
		} else if w != nil && w.known {
			changes = s.ownChanges(changes, now, w.paths)
			attributed = true
		} else {
			s.man = now
			if w != nil && w.why != "" {
				s.note("checkpoints: " + w.why + "; every change made while such a command runs is taken as its own")
			}
		}
		changes = attribute(changes, s.peers(start))
		if len(changes) == 0 {
			return
		}
		s.seq++
		e := Entry{Seq: s.seq, Turn: s.turn, Tool: tool, CallID: callID, Start: start, Time: time.Now().UTC(),
			Exact: exact, Attributed: attributed, Changes: changes, Roots: s.roots}
		if err := appendJournal(s.dir, e); err != nil {
			s.note("checkpoints: could not record what " + tool + " changed: " + err.Error() + "; undo will not cover it")
		}
	}
}

// only keeps the changes to paths and to the directories above them (a
// file tool creates the directories its path needs), each path as named
// and as its directory resolves (a name through a link in the project).
// When none is found the call's write went where the scan does not
// look: it keeps them all, as for a command, since undo must still
// cover the write. A killed call (killed.go) does not: it may simply
// have died before it wrote.
func only(changes []Change, paths []string) ([]Change, bool) {
	paths = withResolved(paths)
	var out []Change
	hit := false
	for _, c := range changes {
		if slices.Contains(paths, c.Path) {
			hit = true
			out = append(out, c)
		} else if c.After.Kind == "dir" && under(paths, c.Path) {
			out = append(out, c)
		}
	}
	if !hit {
		return changes, false
	}
	return out, true
}

// withResolved is paths and, where it differs, each one's directory with
// its links resolved.
func withResolved(paths []string) []string {
	out := slices.Clone(paths)
	for _, p := range paths {
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			if r := filepath.Join(d, filepath.Base(p)); r != p && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

func (s *Store) note(n string) {
	if s.noted[n] {
		return
	}
	s.noted[n] = true
	s.notes = append(s.notes, n)
	if s.Notify != nil {
		s.Notify(n)
	}
}

// scan walks the roots; a file whose size, time, mode and inode match old
// keeps its hash, any other is hashed and kept. Every directory beneath a
// root is opened relative to its parent's descriptor and every file read
// through its directory's, never through a symlink (walls.Dir): a command
// that swaps a directory or a file for a link to somewhere outside, even
// mid-scan, leads the scan nowhere, so the store never holds a file from
// outside the roots.
func (s *Store) scan(old map[string]State) map[string]State {
	out := map[string]State{}
	for _, root := range s.roots {
		d, err := walls.OpenDir(root)
		if err != nil {
			continue
		}
		if st, err := d.Stat(); err == nil {
			out[root] = State{Kind: "dir", Mode: st.Mode().Perm()}
		}
		s.walk(d, out, old)
		d.Close()
	}
	return out
}

func (s *Store) walk(d *walls.Dir, out, old map[string]State) {
	names, _ := d.Names()
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(d.Path(), name)
		fi, err := d.Lstat(name)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			out[p] = s.stateOf(d, name, p, fi, old[p])
			continue
		}
		if skipDirs[name] {
			continue
		}
		sub, err := d.Sub(name)
		if err != nil {
			// Swapped since it was listed: record what stands there now.
			if fi, err := d.Lstat(name); err == nil && !fi.IsDir() {
				out[p] = s.stateOf(d, name, p, fi, old[p])
			}
			continue
		}
		if st, err := sub.Stat(); err == nil {
			out[p] = State{Kind: "dir", Mode: st.Mode().Perm()}
			s.walk(sub, out, old)
		}
		sub.Close()
	}
}

// stateOf is what name in d (listed as fi) holds; a regular file's
// content is kept, read through d.
func (s *Store) stateOf(d *walls.Dir, name, p string, fi fs.FileInfo, old State) State {
	for range 3 {
		switch {
		case fi.IsDir():
			return State{Kind: "dir", Mode: fi.Mode().Perm()}
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := d.Readlink(name)
			return State{Kind: "symlink", Target: t}
		case !fi.Mode().IsRegular():
			// A FIFO, device or socket: never opened, never read.
			return State{Kind: "other", Mode: fi.Mode()}
		}
		cur, err := s.fileState(d, name, p, fi, old)
		if !errors.Is(err, walls.ErrRaced) && !errors.Is(err, walls.ErrSymlink) && !errors.Is(err, walls.ErrNotRegular) {
			return cur
		}
		// Swapped between the listing and the open: look again.
		if fi, err = d.Lstat(name); err != nil {
			return State{Kind: "absent"}
		}
	}
	return State{Kind: "other", Mode: fi.Mode(), NotKept: "it changed while it was read"}
}

func (s *Store) fileState(d *walls.Dir, name, p string, fi fs.FileInfo, old State) (State, error) {
	_, ino, _ := walls.StatIDs(fi)
	mtime := fi.ModTime().UnixNano()
	// A write within the same clock tick as the last look keeps the
	// time: a file that recent is hashed again rather than trusted.
	cur := State{Kind: "file", Mode: fi.Mode().Perm(), Size: fi.Size(), mtime: mtime, ino: ino,
		recent: time.Since(fi.ModTime()) < 50*time.Millisecond}
	if old.Kind == "file" && !old.recent && old.Size == cur.Size && old.mtime == mtime && old.ino == ino && old.Mode == cur.Mode {
		return old, nil
	}
	if fi.Size() > MaxFile {
		cur.NotKept = fmt.Sprintf("larger than %d MiB", MaxFile>>20)
		s.note(fmt.Sprintf("checkpoints: %s (%d MiB) is too big to keep; undo cannot restore its content", p, fi.Size()>>20))
		return cur, nil
	}
	f, _, err := d.OpenFile(name, fi)
	if err != nil {
		cur.NotKept = err.Error()
		return cur, err
	}
	defer f.Close()
	h, n, err := s.keep(f)
	if err != nil {
		cur.NotKept = err.Error()
		return cur, nil
	}
	cur.Blob, cur.Size = h, n
	return cur, nil
}

// keep copies f's content into the blobs under its hash.
func (s *Store) keep(f io.Reader) (string, int64, error) {
	tmp, err := os.CreateTemp(blobDir(s.dir), ".in-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(f, MaxFile+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	if n > MaxFile {
		return "", n, fmt.Errorf("larger than %d MiB", MaxFile>>20)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	final := filepath.Join(blobDir(s.dir), sum)
	if _, err := os.Stat(final); err == nil {
		now := time.Now()
		os.Chtimes(final, now, now) // in use again: Prune's age counts from now
		return sum, n, nil
	}
	if s.used+n > MaxStore {
		s.note(fmt.Sprintf("checkpoints: the project's store is full (%d GiB); later versions are not kept", MaxStore>>30))
		return "", n, errors.New("store full")
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, err
	}
	s.used += n
	return sum, n, nil
}

// diff lists what changed from a to b, parents before children for
// creations and children before parents for removals (the order undo
// reverses).
func diff(a, b map[string]State) []Change {
	var out []Change
	for p, nb := range b {
		na, ok := a[p]
		if !ok {
			na = State{Kind: "absent"}
		}
		if !ok || !na.same(nb) || na.Blob != nb.Blob {
			if ok && na.Kind == "dir" && nb.Kind == "dir" && na.Mode == nb.Mode {
				continue
			}
			out = append(out, Change{Path: p, Before: na, After: nb})
		}
	}
	for p, na := range a {
		if _, ok := b[p]; !ok {
			out = append(out, Change{Path: p, Before: na, After: State{Kind: "absent"}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func appendJournal(dir string, e Entry) error {
	f, err := os.OpenFile(dir, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		f.Close()
		return err
	}
	// One write per entry, synced as the session log is: a machine that
	// loses power after the call must not lose what the call changed,
	// or undo would take the agent's own change for someone else's.
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// DamagedJournalError reports lines of a checkpoint journal that are not
// entries (a disk error, a torn last line, an edit by hand): what those
// calls changed is unknown.
type DamagedJournalError struct {
	Path  string
	Lines []int // 1-based, in the middle
	// Torn is the last line when a kill cut it short (no newline ends
	// the file): the newest call's record, lost; 0 when none.
	Torn int
}

func (e *DamagedJournalError) Error() string {
	lines := make([]string, len(e.Lines))
	for i, n := range e.Lines {
		lines[i] = fmt.Sprint(n)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("checkpoint journal %s: its last line was cut short (harness was killed while recording a call), so what that call changed is unknown", e.Path)
	}
	return fmt.Sprintf("checkpoint journal %s: line %s could not be read, so what that call changed is unknown", e.Path, strings.Join(lines, ", "))
}

// blobRe finds the blob names a damaged line still holds, so Prune keeps
// their content.
var blobRe = regexp.MustCompile(`[0-9a-f]{64}`)

// readJournal reads a store's entries, each with its line; lines that are
// not entries are skipped and returned in a *DamagedJournalError beside
// the rest, with the blob names they still hold.
func readJournal(dir string) ([]Entry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	var dmg *DamagedJournalError
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var e Entry
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			if dmg == nil {
				dmg = &DamagedJournalError{Path: dir}
			}
			dmg.Lines = append(dmg.Lines, n)
			e = Entry{line: n, damaged: true}
			for _, m := range blobRe.FindAll(sc.Bytes(), -1) {
				e.Changes = append(e.Changes, Change{Before: State{Blob: string(m)}})
			}
			out = append(out, e)
			continue
		}
		e.line = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	if dmg == nil {
		return out, nil
	}
	// A damaged last line with no newline after it is a torn write.
	last := dmg.Lines[len(dmg.Lines)-1]
	if len(out) > 0 && out[len(out)-1].line == last {
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, fi.Size()-1); err == nil && b[0] != '\n' {
				dmg.Torn, dmg.Lines = last, dmg.Lines[:len(dmg.Lines)-1]
			}
		}
	}
	return out, dmg
}

func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// shortPath is p relative to the first root holding it.
func shortPath(roots []string, p string) string {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && !strings.HasPrefix(rel, "..") {
			return termsafe.Line(rel)
		}
	}
	return termsafe.Line(p)
}

// Prune removes the journals of a project's sessions older than maxAge
// and then every blob no remaining journal names; it returns the bytes
// freed. Run when a session opens.
func Prune(storeDir string, maxAge time.Duration) int64 {
	ents, err := os.ReadDir(storeDir)
	if err != nil {
		return 0
	}
	keep := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(storeDir, e.Name())
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > maxAge {
			os.Remove(p)
			continue
		}
		all, _ := readJournal(p)
		for _, en := range all {
			for _, c := range en.Changes {
				keep[c.Before.Blob], keep[c.After.Blob] = true, true
			}
		}
	}
	var freed int64
	blobs, _ := os.ReadDir(filepath.Join(storeDir, "blobs"))
	for _, b := range blobs {
		if keep[b.Name()] {
			continue
		}
		if fi, err := b.Info(); err == nil && time.Since(fi.ModTime()) > maxAge {
			// Unnamed but recent: a live session's reference copy, named by
			// no journal until a call changes the file (keep refreshes it)
			if os.Remove(filepath.Join(storeDir, "blobs", b.Name())) == nil {
				freed += fi.Size()
			}
		}
	}
	return freed
}
