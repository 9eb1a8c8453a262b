package reminder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
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
		sb.WriteString("\n<file_changes>\nThese files changed since your previous request (by the user, a tool or a command); read them again before editing them:\n")
		for _, c := range f.Changes {
			fmt.Fprintf(&sb, "- %s (%s)\n", c.Path, c.Kind)
		}
		sb.WriteString("</file_changes>")
	}
	return sb.String()
}

// Builder builds one reminder per request. It remembers the previous
// request's snapshot of changed files and their hashes.
type Builder struct {
	project string
	now     func() time.Time
	git     GitRunner
	prev    map[string]entry // nil before the first Build

	mu    sync.Mutex
	wrote map[string][32]byte // files the agent's file tools wrote since the last Build, by content hash
}

type entry struct {
	kind string
	hash [32]byte
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
		cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), GitArgs...), args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), GitEnv...)
		return cmd.Output()
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
	e := b.hashEntry(filepath.ToSlash(rel), KindModified)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote == nil {
		b.wrote = map[string][32]byte{}
	}
	b.wrote[filepath.ToSlash(rel)] = e.hash
}

// Build returns a fresh reminder. Git failures are not errors: the
// reminder says what it knows. The first Build lists no file changes (there
// is no previous request to compare with).
func (b *Builder) Build(ctx context.Context, todos string) string {
	f := Facts{Time: b.now().Truncate(time.Minute), Todos: todos}
	branch, snap, ok := b.status(ctx)
	f.Git, f.Branch = ok, branch
	b.mu.Lock()
	wrote := b.wrote
	b.wrote = nil
	b.mu.Unlock()
	if ok {
		if b.prev != nil {
			for _, c := range diff(b.prev, snap) {
				if h, own := wrote[c.Path]; own && c.Kind != KindDeleted && snap[c.Path].hash == h {
					continue // the agent's own write, unchanged since
				}
				f.Changes = append(f.Changes, c)
			}
		}
		b.prev = snap
	}
	return Format(f)
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

// GitArgs are prepended to every git call of the harness: no fsmonitor
// hook, no hooks, no attributes file, no pager, no optional locks.
var GitArgs = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
	"-c", "core.attributesFile=/dev/null", "-c", "core.pager=cat", "--no-optional-locks"}

// GitEnv is added to the environment of every git call of the harness.
var GitEnv = []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1", "GIT_PAGER=cat"}

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

// maxHashed bounds how much of one file the change check reads.
const maxHashed = 64 << 20

// hashEntry hashes the file's content (a symlink's target, never what it
// points to); a missing file is deleted. Only regular files are opened,
// without blocking, so a link to /dev/zero or a FIFO costs nothing.
func (b *Builder) hashEntry(rel, kind string) entry {
	path := filepath.Join(b.project, filepath.FromSlash(rel))
	fi, err := os.Lstat(path)
	if err != nil {
		return entry{kind: KindDeleted}
	}
	e := entry{kind: kind}
	h := sha256.New()
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, _ := os.Readlink(path)
		io.WriteString(h, "link "+t)
	case fi.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return e
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return e // swapped for something else since the Lstat
		}
		fmt.Fprintf(h, "size %d\n", fi.Size())
		if _, err := io.Copy(h, io.LimitReader(f, maxHashed)); err != nil {
			return e
		}
	default:
		fmt.Fprintf(h, "%v", fi.Mode().Type())
	}
	copy(e.hash[:], h.Sum(nil))
	return e
}
