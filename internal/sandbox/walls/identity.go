package walls

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Path decisions by identity, not spelling.
//
// On a default macOS volume (case-insensitive, normalization-insensitive
// APFS, with /System/Volumes/Data firmlinked under /) many spellings name
// one file: ~/.SSH/id_rsa is ~/.ssh/id_rsa, and
// /System/Volumes/Data/Users/me/proj/.git is the project's .git. Comparing
// path bytes misses all of them. So the Policy decides "is this path at or
// beneath that root" by the identity (device and inode) of every existing
// directory on the way to the path, and spells the part that does not exist
// yet in the root's own terms, compared case-insensitively where the answer
// is a denial. The rules are the Policy's alone (CheckRead, CheckWrite,
// CheckOpened); this file holds only how paths are compared.

// fileSystem is what the Policy's path decisions ask of the file system.
// osFS is the real one; tests inject a case-insensitive fake.
type fileSystem interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }

// fileID is a file's identity: two names with the same fileID are one file.
type fileID struct{ dev, Ino uint64 }

// identify returns fi's identity; false where the platform has none (then
// only spelling decides).
func identify(fi fs.FileInfo) (fileID, bool) {
	if id, ok := fi.Sys().(fileID); ok { // a test's fake file system
		return id, true
	}
	return SysFileID(fi)
}

// rootIDs caches the identities of the policy's roots, each taken the
// first time it is asked for (roots added mid-session, as protection follows
// the tree, are taken when first asked). A root missing then is matched by
// spelling only: a secret store the user creates mid-session, say.
type rootIDs struct {
	mu  sync.Mutex
	ids map[string]*fileID // nil: no identity
}

func (p *Policy) fileSys() fileSystem {
	if p.fsys != nil {
		return p.fsys
	}
	return osFS{}
}

// roots lists every path the policy names: writable roots, carve-outs,
// protected paths and secrets.
func (p *Policy) roots() []string {
	return slices.Concat(p.writable, p.readOnly, p.protected, p.denyRead)
}

func (p *Policy) rootID(root string) (fileID, bool) {
	p.idents.mu.Lock()
	defer p.idents.mu.Unlock()
	if id, ok := p.idents.ids[root]; ok {
		if id == nil {
			return fileID{}, false
		}
		return *id, true
	}
	if p.idents.ids == nil {
		p.idents.ids = make(map[string]*fileID)
	}
	p.idents.ids[root] = nil
	if fi, err := p.fileSys().Stat(root); err == nil {
		if id, ok := identify(fi); ok {
			p.idents.ids[root] = &id
			return id, true
		}
	}
	return fileID{}, false
}

// located is one path as the policy sees it: the identities of every
// existing directory (and the file itself) on the way to it, and its
// spellings: as resolved, and re-spelled beneath every policy root that one
// of those directories is.
type located struct {
	ids       map[fileID]bool
	spellings []string
}

// locate resolves path (every symlink, as resolve does) and collects its
// identities and spellings. extra, when set, is an identity the caller
// already holds (an opened file's).
func (p *Policy) locate(path string, extra *fileID) located {
	fsys := p.fileSys()
	real := resolveFS(fsys, path)
	l := located{ids: map[fileID]bool{}, spellings: []string{real}}
	if extra != nil {
		l.ids[*extra] = true
	}
	byID := map[fileID][]string{}
	for _, r := range p.roots() {
		if id, ok := p.rootID(r); ok {
			byID[id] = append(byID[id], r)
		}
	}
	for d := real; ; d = filepath.Dir(d) {
		if fi, err := fsys.Stat(d); err == nil {
			if id, ok := identify(fi); ok && !l.ids[id] {
				l.ids[id] = true
				for _, r := range byID[id] {
					if r != d {
						l.spellings = AppendUnique(l.spellings, filepath.Join(r, strings.TrimPrefix(real[len(d):], string(filepath.Separator))))
					}
				}
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return l
}

// under reports whether l is at or beneath root: by identity when root
// exists, else by spelling. fold compares spellings case-insensitively:
// it is set for denials, where matching too much only refuses a strange
// spelling, and never for grants.
func (p *Policy) under(l located, root string, fold bool) bool {
	if id, ok := p.rootID(root); ok && l.ids[id] {
		return true
	}
	for _, s := range l.spellings {
		if Within(s, root) || fold && withinFold(s, root) {
			return true
		}
	}
	return false
}

// withinFold is within, ignoring ASCII and Unicode simple case.
func withinFold(path, root string) bool {
	return Within(FoldKey(path), FoldKey(root))
}

// FoldKey maps every rune of s to one representative of its Unicode simple
// case-folding orbit (the smallest), so two spellings a case-insensitive
// volume takes for one name get one key: not only .SSH and .ssh, but the
// Kelvin sign for k and the long s for s (.githooK, .agentſ), which
// strings.ToLower leaves apart.
func FoldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// FoldOrbit lists r's simple case-folding orbit in rune order.
func FoldOrbit(r rune) []rune {
	out := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// hasGitComponent reports a ".git" component (any case) in rel.
func hasGitComponent(rel string) bool {
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if FoldKey(part) == FoldKey(".git") {
			return true
		}
	}
	return false
}

// resolveFS returns the absolute path with every symlink resolved, including
// a dangling final link and links below a missing component's parent. It
// never fails: unresolvable parts are kept lexically.
func resolveFS(fsys fileSystem, path string) string {
	// Not filepath.Abs: it cleans "link/.." lexically, while the kernel
	// follows the link first and then goes up from its target.
	abs := path
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(path)
		}
		abs = wd + string(filepath.Separator) + path
	}
	vol := filepath.VolumeName(abs)
	parts := strings.Split(strings.TrimPrefix(abs[len(vol):], string(filepath.Separator)), string(filepath.Separator))
	cur := vol + string(filepath.Separator)
	hops := 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		st, err := fsys.Lstat(next)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		target, err := fsys.Readlink(next)
		if err != nil || hops > 40 {
			cur = next
			continue
		}
		if filepath.IsAbs(target) {
			cur = vol + string(filepath.Separator)
			target = strings.TrimPrefix(target[len(filepath.VolumeName(target)):], string(filepath.Separator))
		}
		parts = append(strings.Split(target, string(filepath.Separator)), parts...)
	}
	return cur
}

// CheckOpened applies CheckRead (write false) or CheckWrite to a file the
// caller has already opened, by what was opened: the path the kernel names
// for the descriptor (F_GETPATH on macOS, /proc/self/fd on Linux) and the
// descriptor's own identity, so a link swapped in after the open, a case
// variant or a firmlink spelling decides nothing.
func (p *Policy) CheckOpened(f *os.File, write bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	path, err := openedPath(f)
	if err != nil {
		return fmt.Errorf("%s: the opened file's real path is unknown (%w); harness refuses it", f.Name(), err)
	}
	var extra *fileID
	if id, ok := identify(fi); ok {
		extra = &id
	}
	if write {
		return p.checkWrite(f.Name(), path, extra)
	}
	return p.checkRead(f.Name(), path, extra)
}
