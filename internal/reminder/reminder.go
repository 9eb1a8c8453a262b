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
	prev    map[string]entry // nil before the first Build

	mu    sync.Mutex
	wrote map[string][32]byte // files the agent's file tools wrote since the last Build, by content hash
}

type entry struct {
	kind string
	hash [32]byte
}

// New returns a Builder for the project directory. now is the clock.
func New(project string, now func() time.Time) *Builder {
	if now == nil {
		now = time.Now
	}
	return &Builder{project: project, now: now}
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
// hook, no hooks, no optional locks.
var GitArgs = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-optional-locks"}

// status runs git status in the project and returns the branch and a
// snapshot of the changed files, or ok=false outside a git work tree.
func (b *Builder) status(ctx context.Context) (branch string, snap map[string]entry, ok bool) {
	args := append(append([]string(nil), GitArgs...), "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = b.project
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
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

// hashEntry hashes the file's content; a missing file is deleted.
func (b *Builder) hashEntry(rel, kind string) entry {
	f, err := os.Open(filepath.Join(b.project, filepath.FromSlash(rel)))
	if err != nil {
		return entry{kind: KindDeleted}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return entry{kind: kind}
	}
	e := entry{kind: kind}
	copy(e.hash[:], h.Sum(nil))
	return e
}
