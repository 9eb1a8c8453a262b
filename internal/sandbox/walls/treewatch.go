package walls

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// treeWatch finds what was created under the writable roots since its
// last look without walking them again: the first look walks a root
// whole, recording each directory's inode and change time (ctime); a
// later look stats those directories and reads only the ones whose
// ctime or inode changed, walking whole each directory it has not seen.
// Creating, removing or renaming an entry changes its parent's ctime, and
// no unprivileged process can set a ctime back (utimensat sets it to
// now), so a repository made anywhere, at any depth, among any number of
// files, is found the next time, with no bound to give up at. A
// directory whose ctime is within ctimeSlack of the look is read again
// next time too, since a timestamp taken from a coarse clock cannot tell
// two changes in one tick apart.
//
// A directory visit says to skip (an adopted .git) is not looked into,
// but it is watched shallowly: its own stamp and those of the entries
// directly in it (a config written in place changes only the file's
// ctime). When any of them changes, it is visited again, so what a
// command writes into a repository after a parallel look adopted it
// (a hooks path named in its config) is read, however long after.
type treeWatch struct {
	mu      sync.Mutex
	dirs    map[string]dirStamp // directories seen, by path
	seen    map[string]bool     // roots walked whole once
	skipped map[string]uint64   // skipped directories: their shallow fingerprint
}

type dirStamp struct {
	ino    uint64
	dev    uint64
	ctime  int64
	recent bool
}

// clone is a watch that starts where t is (a fresh one when t is nil).
func (t *treeWatch) clone() *treeWatch {
	c := &treeWatch{}
	if t == nil {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c.dirs, c.seen, c.skipped = maps.Clone(t.dirs), maps.Clone(t.seen), maps.Clone(t.skipped)
	return c
}

const ctimeSlack = 100 * time.Millisecond

// visitFunc is called for every entry seen (new, or in a changed
// directory); skip keeps a directory from being looked into (a .git).
type visitFunc func(path string, d fs.DirEntry) (skip bool, err error)

func stampDir(path string, now time.Time) (dirStamp, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return dirStamp{}, false
	}
	id, _ := SysFileID(st)
	ct, ok := ChangeTime(st)
	if !ok {
		return dirStamp{recent: true}, true // no ctime: read it every time
	}
	return dirStamp{ino: id.Ino, dev: id.dev, ctime: ct.UnixNano(), recent: now.Sub(ct) < ctimeSlack}, true
}

// walk looks under root: whole the first time, then only what changed.
// An error from visit stops it and is returned.
func (t *treeWatch) walk(root string, visit visitFunc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dirs == nil {
		t.dirs, t.seen, t.skipped = map[string]dirStamp{}, map[string]bool{}, map[string]uint64{}
	}
	if !t.seen[root] {
		if err := t.walkWhole(root, visit); err != nil {
			return err
		}
		t.seen[root] = true
		return nil
	}
	now := time.Now()
	if err := t.revisitSkipped(root, visit); err != nil {
		return err
	}
	var changed []string
	for dir, old := range t.dirs {
		if !Within(dir, root) {
			continue
		}
		cur, ok := stampDir(dir, now)
		switch {
		case !ok:
			delete(t.dirs, dir) // gone, or no longer a directory
		case old.recent || cur.ino != old.ino || cur.dev != old.dev || cur.ctime != old.ctime:
			changed = append(changed, dir)
		}
	}
	for _, dir := range changed {
		cur, ok := stampDir(dir, now)
		if !ok {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			delete(t.dirs, dir)
			continue
		}
		t.dirs[dir] = cur
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			skip, err := visit(p, e)
			if err != nil {
				return err
			}
			if skip && e.IsDir() {
				t.skipped[p] = shallow(p)
			}
			if skip || !e.IsDir() {
				continue
			}
			if _, known := t.dirs[p]; !known {
				if err := t.walkWhole(p, visit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// walkWhole walks dir and everything beneath it, recording directories.
func (t *treeWatch) walkWhole(dir string, visit visitFunc) error {
	now := time.Now()
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // unreadable subtree: nothing to protect there we could see
		}
		if path != dir {
			skip, err := visit(path, d)
			if err != nil {
				return err
			}
			if skip && d.IsDir() {
				t.skipped[path] = shallow(path)
				return fs.SkipDir
			}
		}
		if d.IsDir() {
			if st, ok := stampDir(path, now); ok {
				t.dirs[path] = st
			}
		}
		return nil
	})
}

// revisitSkipped visits again each skipped directory under root whose
// shallow fingerprint changed (or is recent), and forgets the ones gone.
func (t *treeWatch) revisitSkipped(root string, visit visitFunc) error {
	for dir, old := range t.skipped {
		if !Within(dir, root) {
			continue
		}
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() {
			delete(t.skipped, dir)
			continue
		}
		cur := shallow(dir)
		if cur == old && cur != alwaysAgain {
			continue
		}
		t.skipped[dir] = cur
		if _, err := visit(dir, fs.FileInfoToDirEntry(st)); err != nil {
			return err
		}
	}
	return nil
}

// alwaysAgain is the fingerprint of a directory to visit every time: one
// changed within ctimeSlack, or one whose times cannot be read.
const alwaysAgain = 0

// shallow fingerprints dir and the entries directly in it: name, inode,
// ctime and size of each.
func shallow(dir string) uint64 {
	now := time.Now()
	h := fnv.New64a()
	add := func(name string, fi fs.FileInfo) bool {
		ct, ok := ChangeTime(fi)
		if !ok || now.Sub(ct) < ctimeSlack {
			return false
		}
		id, _ := SysFileID(fi)
		fmt.Fprintf(h, "%s\x00%d:%d:%d:%d\x00", name, id.dev, id.Ino, ct.UnixNano(), fi.Size())
		return true
	}
	st, err := os.Lstat(dir)
	if err != nil || !add(".", st) {
		return alwaysAgain
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return alwaysAgain
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return alwaysAgain // changed under us: look again next time
		}
		if !add(e.Name(), fi) {
			return alwaysAgain
		}
	}
	if v := h.Sum64(); v != alwaysAgain {
		return v
	}
	return 1
}
