package gitshadow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Limited git writes for the project's own repository.
//
// A command may write a repository's data (objects, refs, logs, the index,
// HEAD) but nothing that can make git run a program: config (filters,
// fsmonitor, aliases, hooksPath, pagers), hooks/, info/, the pointer file,
// commondir, and whatever else lives in the git directory. The kernel
// cannot tell names apart within one writable directory (git creates
// index.lock next to config), so the git directory a command sees is a
// shadow: a harness-owned directory mounted over it, holding
//
//   - objects append-only (gitobjects.go, watch_linux.go): the shadow's
//     own objects directory takes a command's new objects, with the real
//     one mounted read-only inside it as its alternate; the host checks
//     each new object against its name and adds it to the real directory,
//     as it appears and after the command, without replacing anything.
//     No command can delete, prune, repack away or overwrite an object
//     that existed before it ran or that it wrote and the host took;
//   - the ref trees (refs, logs) and packed-refs as its own copies, synced
//     in when the host changed them and judged on the way out (refs.go);
//   - copies of the data files (HEAD, index, ORIG_HEAD, …), copied in
//     before each command and, after it, checked (HEAD names a ref or a
//     commit the host has, the index is an index naming objects the host
//     has, …) and copied back;
//   - everything else bound read-only from the real one.
//
// A file a command creates in the shadow under any other name (commondir,
// config.worktree, shallow, a rebase's todo list with exec lines) never
// reaches the real repository. Before and after each command the branch
// heads and notes refs are compared, and any that moved off its history
// or vanished is reported with the hash to return to.

// maxGitFile bounds a data file harness copies back (an index of a large
// repository is tens of megabytes).
const maxGitFile = 1 << 30

// gitShadow is the host side of one shadowed git directory.
type gitShadow struct {
	walls.GitDir
	Shadow string
	mount  inner.GitMount
	synced map[string]fileStamp // per data file: its state in both places after the last sync
	watch  *objectWatch         // imports objects as they appear (watch_linux.go)
	store  *objectStore         // what the real repository holds (links.go)
}

type fileStamp struct{ real, shadow stamp }

type stamp struct {
	exists bool
	size   int64
	mtime  int64
	ino    uint64
}

func stampOf(path string) stamp {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return stamp{}
	}
	id, _ := walls.SysFileID(st)
	return stamp{exists: true, size: st.Size(), mtime: st.ModTime().UnixNano(), ino: id.Ino}
}

// gitSession is a session's shadows.
type Session struct {
	base    string // host directory holding the shadows
	Shadows []*gitShadow
	// mu orders Before and After of commands that overlap (background
	// jobs); running counts the commands between the two.
	mu      sync.Mutex
	running int
}

// openGitShadows builds the shadows of p.GitWrite in a new directory next
// to the session's private one, tmp. Not inside it: a command sees tmp as
// its /tmp and could move a shadow away and put a link to the user's home
// in its place for the host's next copy to write through.
func Open(p *walls.Policy, tmp string) (*Session, error) {
	if len(p.GitWrite()) == 0 {
		return nil, nil
	}
	base, err := os.MkdirTemp(filepath.Dir(tmp), filepath.Base(tmp)+"-git-")
	if err != nil {
		return nil, fmt.Errorf("preparing git writes: %w", err)
	}
	gs := &Session{base: base}
	dirs := append([]walls.GitDir(nil), p.GitWrite()...)
	// Outer directories first: a worktree's gitdir lies in its common
	// directory's worktrees/, and its shadow is mounted on top.
	sort.SliceStable(dirs, func(i, j int) bool { return len(dirs[i].Dir) < len(dirs[j].Dir) })
	for i, g := range dirs {
		sh, err := newGitShadow(g, filepath.Join(base, strconv.Itoa(i)))
		if err != nil {
			gs.Close()
			return nil, fmt.Errorf("preparing git writes for %s: %w", g.Dir, err)
		}
		gs.Shadows = append(gs.Shadows, sh)
	}
	return gs, nil
}

func newGitShadow(g walls.GitDir, shadow string) (*gitShadow, error) {
	if err := os.Mkdir(shadow, 0o755); err != nil {
		return nil, err
	}
	sh := &gitShadow{GitDir: g, Shadow: shadow, synced: map[string]fileStamp{}}
	sh.mount = inner.GitMount{Shadow: shadow, Dir: g.Dir, Objects: g.Objects}
	if g.Objects {
		if err := sh.prepareObjects(); err != nil {
			return nil, err
		}
		sh.store = newObjectStore(g.Dir, repoUsesSHA256(g.Dir))
		sh.startWatch()
	}
	for _, d := range g.Dirs {
		// A data directory git would create (logs) is made on the host
		// now, so it is bound rather than left to the shadow.
		if err := os.MkdirAll(filepath.Join(g.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(g.Dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		real := filepath.Join(g.Dir, name)
		st, err := os.Stat(real)
		if err != nil {
			continue // a dangling link: nothing to see through it
		}
		switch {
		case Contains(g.Dirs, name) && st.IsDir():
			// The shadow's own copy (refs.go), synced by Before and After.
			if err := os.Mkdir(filepath.Join(shadow, name), 0o755); err != nil {
				return nil, err
			}
			continue
		case Contains(g.Files, name) && e.Type().IsRegular():
			continue // copied by syncIn
		case g.Objects && name == "objects":
			continue // the shadow's own, made by prepareObjects
		case st.IsDir():
			err = os.Mkdir(filepath.Join(shadow, name), 0o755)
		default:
			err = os.WriteFile(filepath.Join(shadow, name), nil, 0o644)
		}
		if err != nil {
			return nil, err
		}
		sh.mount.RO = append(sh.mount.RO, name)
	}
	return sh, nil
}

func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mounts lists the shadows in mount order.
func (gs *Session) Mounts() []inner.GitMount {
	if gs == nil {
		return nil
	}
	var out []inner.GitMount
	for _, sh := range gs.Shadows {
		out = append(out, sh.mount)
	}
	return out
}

// writePaths are the paths (as seen inside) Landlock must leave writable.
func (gs *Session) WritePaths() []string {
	var out []string
	for _, m := range gs.Mounts() {
		out = append(out, m.Dir)
		for _, d := range m.RW {
			out = append(out, filepath.Join(m.Dir, d))
		}
	}
	return out
}

// bwrapArgs mounts the shadows.
func (gs *Session) BwrapArgs() []string {
	var args []string
	for _, m := range gs.Mounts() {
		args = append(args, "--bind", m.Shadow, m.Dir)
		for _, d := range m.RW {
			args = append(args, "--bind", filepath.Join(m.Dir, d), filepath.Join(m.Dir, d))
		}
		for _, r := range m.RO {
			args = append(args, "--ro-bind", filepath.Join(m.Dir, r), filepath.Join(m.Dir, r))
		}
		if m.Objects {
			src, dst := m.BaseObjects()
			args = append(args, "--ro-bind", src, dst)
		}
	}
	return args
}

// gitBefore is what Before hands After: nothing any more, the refs a
// command changed being judged against the host's own values (refs.go).
type gitBefore struct{}

// before copies into the shadows the data files and refs the host
// changed since the last command (the user may have run git meanwhile).
func (gs *Session) Before() gitBefore {
	if gs == nil {
		return gitBefore{}
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.running++
	for _, sh := range gs.Shadows {
		sh.syncIn()
		if root, err := os.OpenRoot(sh.Shadow); err == nil {
			sh.syncTreesIn(root)
			root.Close()
		}
	}
	return gitBefore{}
}

// RefMove is a branch head or notes ref that a command moved off its
// history or deleted: Old is the commit to return to.
type RefMove struct {
	Ref      string // e.g. refs/heads/main
	Old, New string // New is "" for a deleted ref
	// Lost is set when the old commit is no longer in the repository
	// either (pruned or deleted): the hash is then all that is left.
	Lost bool
}

func (m RefMove) String() string {
	short := func(h string) string {
		if len(h) > 12 {
			return h[:12]
		}
		return h
	}
	if m.Lost {
		return fmt.Sprintf("%s moved from %s to %s, and the old commit is no longer in the repository (its objects were deleted); a remote or another clone may still have it",
			m.Ref, m.Old, short(m.New))
	}
	if !strings.HasPrefix(m.Ref, "refs/heads/") {
		what := "moved off its history, from " + m.Old + " to " + short(m.New)
		if m.New == "" {
			what = "deleted (it was at " + m.Old + ")"
		}
		return fmt.Sprintf("%s was %s; to bring it back: git update-ref %s %s", m.Ref, what, m.Ref, m.Old)
	}
	if m.New == "" {
		return fmt.Sprintf("%s was deleted (it was at %s); to bring it back: git branch %s %s",
			m.Ref, m.Old, strings.TrimPrefix(m.Ref, "refs/heads/"), m.Old)
	}
	return fmt.Sprintf("%s moved off its history, from %s to %s; the old commit is still in the repository: git branch -f %s %s (or git reset --hard %s on that branch) returns to it",
		m.Ref, m.Old, short(m.New), strings.TrimPrefix(m.Ref, "refs/heads/"), m.Old, m.Old)
}

// after copies the checked data files and refs back to the real
// repository and reports the branch heads and notes refs the command
// moved off their history or deleted. notes are for the command's output.
func (gs *Session) After(ctx context.Context, _ gitBefore) (moves []RefMove, notes []string) {
	if gs == nil {
		return nil, nil
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.running--
	others := gs.running > 0
	for _, sh := range gs.Shadows {
		// Objects first: a ref copied back may name a new commit.
		notes = append(notes, sh.ImportObjects(ctx, others)...)
	}
	// The objects live in the common directory; every shadow's refs are
	// judged against it.
	objDir := gs.Shadows[0].Dir
	for _, sh := range gs.Shadows {
		if sh.Objects {
			objDir = sh.Dir
		}
	}
	h := &hostState{ctx: ctx, gitDir: objDir}
	for _, sh := range gs.Shadows {
		if root, err := os.OpenRoot(sh.Shadow); err == nil {
			sh.queueIndex(root, h)
			root.Close()
		}
	}
	var applied []*refChange
	for _, sh := range gs.Shadows {
		root, err := os.OpenRoot(sh.Shadow)
		if err != nil {
			notes = append(notes, fmt.Sprintf("the git data this command wrote could not be read (%v); none of it reached the repository", err))
			continue
		}
		done, n := sh.syncRefsOut(root, h, others)
		notes = append(notes, n...)
		notes = append(notes, sh.syncLogsOut(root, h)...)
		notes = append(notes, sh.syncOut(h)...)
		root.Close()
		if sh.Refs {
			applied = append(applied, done...)
		}
	}
	for _, c := range applied {
		if !isHash(c.old) || !strings.HasPrefix(c.name, "refs/heads/") && !strings.HasPrefix(c.name, "refs/notes/") {
			continue
		}
		switch {
		case c.new == "":
			moves = append(moves, RefMove{Ref: c.name, Old: c.old, Lost: !hasObject(ctx, objDir, c.old)})
		case isHash(c.new) && !isAncestor(ctx, objDir, c.old, c.new):
			moves = append(moves, RefMove{Ref: c.name, Old: c.old, New: c.new, Lost: !hasObject(ctx, objDir, c.old)})
		}
	}
	return moves, notes
}

// gitStateDirs are kept in a shadow from one command to the next, so a
// rebase or cherry-pick stopped on a conflict can be continued inside;
// they never reach the real directory.
var gitStateDirs = []string{"rebase-merge", "rebase-apply", "sequencer"}

// syncIn removes what an earlier command planted in the shadow (a
// commondir, a config.worktree: the walls hold them back from the host,
// and this keeps git inside seeing the host's repository) and copies each
// data file the host changed since the last sync into the shadow.
func (sh *gitShadow) syncIn() {
	if ents, err := os.ReadDir(sh.Shadow); err == nil {
		for _, e := range ents {
			n := e.Name()
			if !Contains(sh.Dirs, n) && !Contains(sh.mount.RO, n) && !Contains(sh.Files, n) && !Contains(gitStateDirs, n) && !(sh.Objects && n == "objects") {
				os.RemoveAll(filepath.Join(sh.Shadow, n))
			}
		}
	}
	for _, name := range sh.Files {
		real, shadow := filepath.Join(sh.Dir, name), filepath.Join(sh.Shadow, name)
		if st, err := os.Lstat(shadow); err == nil && !st.Mode().IsRegular() {
			os.RemoveAll(shadow) // a command made it a directory or a link
		}
		rs := stampOf(real)
		if last, ok := sh.synced[name]; ok && last.real == rs && last.shadow == stampOf(shadow) {
			continue
		}
		if !rs.exists {
			os.Remove(shadow)
		} else if err := copyFileNoFollow(real, shadow); err != nil {
			continue
		}
		sh.synced[name] = fileStamp{real: stampOf(real), shadow: stampOf(shadow)}
	}
	if sh.Objects {
		sh.resetAlternates()
	}
}

// syncOut copies each data file the command changed back to the real
// directory, after checking it is what git writes there.
func (sh *gitShadow) syncOut(h *hostState) (notes []string) {
	for _, name := range sh.Files {
		if name == "packed-refs" {
			continue // with the refs (refs.go)
		}
		real, shadow := filepath.Join(sh.Dir, name), filepath.Join(sh.Shadow, name)
		ss := stampOf(shadow)
		last, ok := sh.synced[name]
		if ok && last.shadow == ss {
			continue
		}
		if !ss.exists {
			if _, err := os.Lstat(shadow); err == nil {
				notes = append(notes, fmt.Sprintf("%s is not a regular file in the sandbox's view; not copied back", real))
				continue
			}
		}
		switch {
		case !ss.exists && !ok:
			continue // never there
		case !ss.exists && name == "HEAD":
			notes = append(notes, real+" was removed inside; the host's is kept (a repository without HEAD is no repository)")
			continue
		case !ss.exists:
			if err := os.Remove(real); err != nil && !errors.Is(err, fs.ErrNotExist) {
				notes = append(notes, fmt.Sprintf("removing %s: %v", real, err))
				continue
			}
		default:
			data, err := walls.ReadFileNoFollow(shadow, maxGitFile)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s written inside was not copied back: %v", real, err))
				continue
			}
			if err := checkGitFile(name, data); err != nil {
				notes = append(notes, fmt.Sprintf("%s written inside was not copied back: %v", real, err))
				continue
			}
			if name == "index" {
				if o := sh.indexMissing(data, h); o != "" {
					notes = append(notes, fmt.Sprintf("the index written inside names object %s, which is not in the repository (it was deleted before harness could keep it); the host's index is kept, so `git status` on the host may differ from inside", o))
					continue
				}
			}
			if s := strings.TrimSpace(string(data)); name == "HEAD" && isHash(s) && !h.has(s) {
				notes = append(notes, fmt.Sprintf("HEAD was detached at %s inside, but that commit is not in the repository (its objects were deleted); the host's HEAD is kept", s))
				continue
			}
			if err := writeFileAtomic(real, data); err != nil {
				notes = append(notes, fmt.Sprintf("copying %s back: %v", real, err))
				continue
			}
		}
		sh.synced[name] = fileStamp{real: stampOf(real), shadow: stampOf(shadow)}
	}
	return notes
}

// checkGitFile accepts what git itself writes under name.
func checkGitFile(name string, data []byte) error {
	switch name {
	case "index":
		if len(data) > 0 && !bytes.HasPrefix(data, []byte("DIRC")) {
			return errors.New("not a git index")
		}
		return nil
	case "HEAD":
		s := strings.TrimSuffix(string(data), "\n")
		if ref, ok := strings.CutPrefix(s, "ref: "); ok {
			if !strings.HasPrefix(ref, "refs/") || !validRefName(ref) {
				return fmt.Errorf("HEAD names %q, not a ref under refs/", ref)
			}
			return nil
		}
		if !isHash(s) {
			return errors.New("HEAD is neither a ref nor a commit hash")
		}
		return nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errors.New("binary data in a text file")
	}
	switch name {
	case "ORIG_HEAD", "MERGE_HEAD", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD":
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if !isHash(strings.TrimSpace(l)) {
				return fmt.Errorf("%s holds %q, not a commit hash", name, l)
			}
		}
	case "packed-refs":
		for _, l := range strings.Split(string(data), "\n") {
			f := strings.Fields(l)
			switch {
			case l == "" || strings.HasPrefix(l, "#"):
			case strings.HasPrefix(l, "^") && isHash(l[1:]):
			case len(f) == 2 && isHash(f[0]) && validRefName(f[1]):
			default:
				return fmt.Errorf("packed-refs line %q", l)
			}
		}
	}
	return nil
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// validRefName is git's check-ref-format, the parts that matter here.
func validRefName(r string) bool {
	if r == "" || strings.HasSuffix(r, "/") || strings.HasSuffix(r, ".") || strings.Contains(r, "..") ||
		strings.Contains(r, "@{") || strings.Contains(r, "//") {
		return false
	}
	for _, part := range strings.Split(r, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// isAncestor asks the host's git whether old is an ancestor of cur,
// through options that keep planted configuration from running anything.
// When git cannot tell (no git, a missing object), the move is reported.
func isAncestor(ctx context.Context, gitDir, old, cur string) bool {
	return hostGitOK(ctx, gitDir, "merge-base", "--is-ancestor", old, cur)
}

// hasObject reports whether the repository still holds commit h.
func hasObject(ctx context.Context, gitDir, h string) bool {
	return hostGitOK(ctx, gitDir, "cat-file", "-e", h+"^{commit}")
}

func hostGitOK(ctx context.Context, gitDir string, args ...string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return gitsafe.Command(ctx, "", append([]string{"--git-dir=" + gitDir}, args...)...).Run() == nil
}

func copyFileNoFollow(src, dst string) error {
	data, err := walls.ReadFileNoFollow(src, maxGitFile)
	if err != nil {
		return err
	}
	return writeFileAtomic(dst, data)
}

// writeFileAtomic replaces path by a new file (never writing through a
// link planted at path).
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".harness-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	os.Chmod(f.Name(), 0o644)
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// close removes the shadows.
func (gs *Session) Close() {
	if gs != nil {
		for _, sh := range gs.Shadows {
			if sh.watch != nil {
				sh.watch.stop()
			}
		}
		os.RemoveAll(gs.base)
	}
}

// filterTampered drops from a tamper report the HEAD files of shadowed
// git directories: commands may move HEAD, and after() checked and
// reported what they did to it.
func (gs *Session) FilterTampered(paths []string) []string {
	if gs == nil {
		return paths
	}
	var out []string
	for _, p := range paths {
		skip := false
		for _, sh := range gs.Shadows {
			skip = skip || p == filepath.Join(sh.Dir, "HEAD") && Contains(sh.Files, "HEAD")
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}
