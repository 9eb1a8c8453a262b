package reminder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
)

// Change kinds.
const (
	KindModified = "modified"
	KindAdded    = "added"   // staged as new
	KindDeleted  = "deleted" // gone from disk or staged for deletion
	KindNew      = "new"     // untracked
)

// Change is one file that changed since the previous request.
type Change struct {
	Path string // relative to the project
	Kind string
}

// Facts are what a reminder says; Format renders them.
type Facts struct {
	Time    time.Time
	Git     bool   // the project is a git work tree
	Branch  string // "(detached)" when HEAD is not a branch
	Todos   string
	Changes []Change
}

// Format renders facts as the reminder text.
func Format(f Facts) string {
	var sb strings.Builder
	sb.WriteString("<context>\n")
	fmt.Fprintf(&sb, "time: %s\n", f.Time.Format("2006-01-02 15:04 MST (Monday)"))
	if f.Git {
		fmt.Fprintf(&sb, "git branch: %s\n", f.Branch)
	} else {
		sb.WriteString("git: the project is not a git repository\n")
	}
	sb.WriteString("</context>")
	if t := strings.TrimSpace(f.Todos); t != "" {
		sb.WriteString("\n<todos>\n" + t + "\n</todos>")
	}
	if len(f.Changes) > 0 {
		sb.WriteByte('\n')
		writeChanges(&sb, f.Changes)
	}
	return sb.String()
}

// Mode says what a reminder carries.
type Mode int

const (
	// Full is the ephemeral reminder: every fact, every request, sent after
	// the cached prefix and never stored.
	Full Mode = iota
	// Delta is the persisted reminder of an append-only history: only what
	// changed since the last one the model was sent (the time at the start
	// of a user turn or when the hour changes, the branch when it changes,
	// the plan when it changes, file changes when there are any), stored
	// as a block that then stays. Nothing changed: no reminder at all.
	Delta
)

// State is what the model was last told: the committed snapshot a reminder
// is compared with. It is logged so a resumed session reports the edits
// made while harness was not running.
type State struct {
	Told   bool              `json:"told"`             // a reminder was committed
	Hour   time.Time         `json:"hour,omitzero"`    // the hour of the last time sent
	Git    bool              `json:"git,omitempty"`    // the project was a git work tree
	Branch string            `json:"branch,omitempty"` // the branch last sent
	Todos  string            `json:"todos,omitempty"`  // the plan last sent
	Files  map[string]string `json:"files,omitempty"`  // changed files: path -> kind:hash
}

// Builder builds reminders. Building one has no effect: the Pending it
// returns must be committed once the request carrying it is really sent (or
// the block stored), so a request built for display (/context), or one that
// failed and is rebuilt, loses no file change.
type Builder struct {
	project string
	now     func() time.Time
	git     GitRunner

	mu    sync.Mutex
	state State
	wrote map[string][32]byte // files the agent's file tools wrote since the last commit, by content hash
	files map[string]fileSum  // stat-keyed hash cache
	// Hashed counts the files read to hash them (for tests and the
	// benchmark); only files whose size, time or inode changed are read.
	hashed int
}

// GitRunner runs git with args in the project directory and returns its
// standard output; an error means git failed or is not there.
type GitRunner func(ctx context.Context, args []string) ([]byte, error)

// New returns a Builder for the project directory. now is the clock. Its
// git runs on the host (HostGit) until SetGit says otherwise: a session
// sets a runner inside the sandbox's walls, so configuration the agent
// wrote (a filter, an fsmonitor) runs there if anywhere, never on the host.
func New(project string, now func() time.Time) *Builder {
	if now == nil {
		now = time.Now
	}
	return &Builder{project: project, now: now, git: HostGit(project)}
}

// SetGit replaces how the Builder runs git. Call it before the first Build.
func (b *Builder) SetGit(run GitRunner) { b.git = run }

// HostGit runs git on the host in dir, with every program its
// configuration can name that status would run turned off: no fsmonitor,
// no hooks, no system or global configuration, no attributes file. A
// repository's own clean filters can still run on status, which is why a
// session runs its git inside the walls instead.
func HostGit(dir string) GitRunner {
	return func(ctx context.Context, args []string) ([]byte, error) {
		return gitsafe.Output(gitsafe.Command(ctx, dir, args...))
	}
}

// Wrote records that the agent's own file tool (write_file, edit_file) just
// wrote path: the model knows that content, so the next reminder does not
// send it back to re-read the file, unless something else changed the file
// after. Safe for concurrent use.
func (b *Builder) Wrote(path string) {
	rel, err := filepath.Rel(b.project, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	rel = filepath.ToSlash(rel)
	e := b.hashEntry(rel, KindModified)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote == nil {
		b.wrote = map[string][32]byte{}
	}
	b.wrote[rel] = e.hash
}

// Pending is a built reminder not yet sent.
type Pending struct {
	b     *Builder
	Text  string // "" when a Delta reminder has nothing to say
	next  State
	wrote map[string][32]byte
}

// Commit records that the reminder reached the model: later reminders are
// compared with it. Committing twice, or a nil Pending, does nothing.
func (p *Pending) Commit() {
	if p == nil || p.b == nil {
		return
	}
	b := p.b
	p.b = nil
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state = p.next
	for path, h := range p.wrote {
		if b.wrote[path] == h {
			delete(b.wrote, path)
		}
	}
}

// State returns the committed snapshot.
func (b *Builder) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Restore sets the committed snapshot, from a resumed session's log.
func (b *Builder) Restore(s State) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state = s
}

// Resay makes the next Delta reminder state the time, the branch and the
// plan again (the history that carried them was compacted or rewound);
// file changes keep being compared with what was committed.
func (b *Builder) Resay() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Hour, b.state.Branch, b.state.Git = time.Time{}, "\x00", false
	b.state.Todos = "\x00"
}

// Build returns a Full reminder and commits it at once, for callers that
// send what they build.
func (b *Builder) Build(ctx context.Context, todos string) string {
	p := b.Prepare(ctx, todos, Full, false)
	p.Commit()
	return p.Text
}

// Prepare builds a reminder without committing it. turnStart says the
// request opens a user turn (a Delta reminder then states the time). Git
// failures are not errors: the reminder says what it knows. The first
// reminder lists no file changes (there is nothing to compare with).
func (b *Builder) Prepare(ctx context.Context, todos string, mode Mode, turnStart bool) *Pending {
	now := b.now().Truncate(time.Minute)
	branch, snap, ok := b.status(ctx)
	b.mu.Lock()
	prev := b.state
	wrote := make(map[string][32]byte, len(b.wrote))
	for k, v := range b.wrote {
		wrote[k] = v
	}
	b.mu.Unlock()

	f := Facts{Time: now, Todos: todos, Git: ok, Branch: branch}
	next := State{Told: true, Hour: now.Truncate(time.Hour), Git: ok, Branch: branch, Todos: strings.TrimSpace(todos), Files: prev.Files}
	if ok {
		cur := encode(snap)
		if prev.Told {
			for _, c := range diff(decode(prev.Files), snap) {
				if h, own := wrote[c.Path]; own && c.Kind != KindDeleted && snap[c.Path].hash == h {
					continue // the agent's own write, unchanged since
				}
				f.Changes = append(f.Changes, c)
			}
		}
		next.Files = cur
	}
	p := &Pending{b: b, next: next, wrote: wrote}
	if mode == Full {
		p.Text = Format(f)
		return p
	}
	d := delta{Facts: f}
	d.time = !prev.Told || turnStart || !next.Hour.Equal(prev.Hour)
	d.branch = !prev.Told || ok != prev.Git || branch != prev.Branch
	d.todos = next.Todos != prev.Todos
	p.Text = d.format()
	return p
}

// FormatDelta renders a Delta reminder stating only the facts flagged, as
// the agent stores it (for the context benchmark's model of it).
func FormatDelta(f Facts, time, branch, todos bool) string {
	return delta{Facts: f, time: time, branch: branch, todos: todos}.format()
}

// delta is a Delta reminder: the facts and which of them to state.
type delta struct {
	Facts
	time, branch, todos bool
}

func (d delta) format() string {
	var sb strings.Builder
	if d.time || d.branch {
		sb.WriteString("<context>\n")
		if d.time {
			fmt.Fprintf(&sb, "time: %s\n", d.Time.Format("2006-01-02 15:04 MST (Monday)"))
		}
		if d.branch {
			if d.Git {
				fmt.Fprintf(&sb, "git branch: %s\n", d.Branch)
			} else {
				sb.WriteString("git: the project is not a git repository\n")
			}
		}
		sb.WriteString("</context>")
	}
	if d.todos {
		t := strings.TrimSpace(d.Todos)
		if t == "" {
			t = "(the plan is empty)"
		}
		sep(&sb)
		sb.WriteString("<todos>\n" + t + "\n</todos>")
	}
	if len(d.Changes) > 0 {
		sep(&sb)
		writeChanges(&sb, d.Changes)
	}
	return sb.String()
}

func sep(sb *strings.Builder) {
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
}

func writeChanges(sb *strings.Builder, cs []Change) {
	sb.WriteString("<file_changes>\nThese files changed since your previous request (by the user, a tool or a command); read them again before editing them:\n")
	for _, c := range cs {
		fmt.Fprintf(sb, "- %s (%s)\n", c.Path, c.Kind)
	}
	sb.WriteString("</file_changes>")
}

type entry struct {
	kind string
	hash [32]byte
}

// encode and decode turn a snapshot into State.Files and back.
func encode(snap map[string]entry) map[string]string {
	out := make(map[string]string, len(snap))
	for p, e := range snap {
		out[p] = e.kind + ":" + hex.EncodeToString(e.hash[:])
	}
	return out
}

func decode(files map[string]string) map[string]entry {
	out := make(map[string]entry, len(files))
	for p, v := range files {
		kind, h, _ := strings.Cut(v, ":")
		e := entry{kind: kind}
		if raw, err := hex.DecodeString(h); err == nil {
			copy(e.hash[:], raw)
		}
		out[p] = e
	}
	return out
}

// diff lists the paths whose kind or content differs between two
// snapshots; a path that left the status (reverted or committed) is
// reported as modified.
func diff(prev, cur map[string]entry) []Change {
	var out []Change
	for p, e := range cur {
		if old, ok := prev[p]; !ok || old != e {
			out = append(out, Change{Path: p, Kind: e.kind})
		}
	}
	for p := range prev {
		if _, ok := cur[p]; !ok {
			out = append(out, Change{Path: p, Kind: KindModified})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// status runs git status in the project and returns the branch and a
// snapshot of the changed files, or ok=false outside a git work tree.
func (b *Builder) status(ctx context.Context) (branch string, snap map[string]entry, ok bool) {
	out, err := b.git(ctx, []string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"})
	if err != nil {
		return "", nil, false
	}
	branch = "(detached)"
	snap = map[string]entry{}
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		r := string(recs[i])
		switch {
		case strings.HasPrefix(r, "# branch.head "):
			if h := strings.TrimPrefix(r, "# branch.head "); h != "(detached)" {
				branch = h
			}
		case strings.HasPrefix(r, "1 "), strings.HasPrefix(r, "2 "):
			// "1 XY sub mH mI mW hH hI path"; "2 ... Xscore path" then origPath.
			n := 9
			if r[0] == '2' {
				n = 10
				i++ // skip the original path
			}
			f := strings.SplitN(r, " ", n)
			if len(f) == n {
				snap[f[n-1]] = b.hashEntry(f[n-1], kindOf(f[1]))
			}
		case strings.HasPrefix(r, "u "):
			f := strings.SplitN(r, " ", 11)
			if len(f) == 11 {
				snap[f[10]] = b.hashEntry(f[10], KindModified)
			}
		case strings.HasPrefix(r, "? "):
			p := r[2:]
			snap[p] = b.hashEntry(p, KindNew)
		}
	}
	return branch, snap, true
}

func kindOf(xy string) string {
	switch {
	case strings.Contains(xy, "D"):
		return KindDeleted
	case strings.HasPrefix(xy, "A"):
		return KindAdded
	}
	return KindModified
}

// MaxHashSize bounds the files whose content is hashed: a bigger one is
// known by its size and modification time, so a 300 MB untracked file costs
// a stat per request, not a read.
const MaxHashSize = 8 << 20

// fileSum is a cached hash and the stat it was taken at.
type fileSum struct {
	size  int64
	mtime time.Time
	ino   uint64
	mode  os.FileMode
	hash  [32]byte
}

// hashEntry returns the file's entry: its content hash, re-read only when
// its stat changed since the last hash. A missing file is deleted; anything
// not a regular file (a FIFO, a device, a directory) and files above
// MaxHashSize are never opened: their stat stands for the content.
func (b *Builder) hashEntry(rel, kind string) entry {
	path := filepath.Join(b.project, filepath.FromSlash(rel))
	fi, err := os.Lstat(path)
	if err != nil {
		return entry{kind: KindDeleted}
	}
	sum := fileSum{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi), mode: fi.Mode()}
	b.mu.Lock()
	if c, ok := b.files[rel]; ok && c.size == sum.size && c.mtime.Equal(sum.mtime) && c.ino == sum.ino && c.mode == sum.mode {
		b.mu.Unlock()
		return entry{kind: kind, hash: c.hash}
	}
	b.mu.Unlock()
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		sum.hash = sha256.Sum256([]byte("symlink\x00" + target))
	case !fi.Mode().IsRegular() || fi.Size() > MaxHashSize:
		sum.hash = sha256.Sum256([]byte(fmt.Sprintf("stat\x00%v\x00%d\x00%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())))
	default:
		// O_NONBLOCK: a file swapped for a FIFO after the Lstat must not
		// hang the open; the descriptor is checked again.
		f, err := os.OpenFile(path, os.O_RDONLY|syscallNonblock, 0)
		if err != nil {
			return entry{kind: KindDeleted}
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return entry{kind: kind}
		}
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(f, MaxHashSize+1)); err != nil {
			return entry{kind: kind}
		}
		copy(sum.hash[:], h.Sum(nil))
		b.mu.Lock()
		b.hashed++
		b.mu.Unlock()
	}
	b.mu.Lock()
	if b.files == nil {
		b.files = map[string]fileSum{}
	}
	b.files[rel] = sum
	b.mu.Unlock()
	return entry{kind: kind, hash: sum.hash}
}
