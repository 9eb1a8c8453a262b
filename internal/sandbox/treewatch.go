package sandbox

import (
	"io/fs"
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
type treeWatch struct {
	mu   sync.Mutex
	dirs map[string]dirStamp // directories seen, by path
	seen map[string]bool     // roots walked whole once
}

type dirStamp struct {
	ino    uint64
	dev    uint64
	ctime  int64
	recent bool
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
	id, _ := sysFileID(st)
	ct, ok := changeTime(st)
	if !ok {
		return dirStamp{recent: true}, true // no ctime: read it every time
	}
	return dirStamp{ino: id.ino, dev: id.dev, ctime: ct.UnixNano(), recent: now.Sub(ct) < ctimeSlack}, true
}

// walk looks under root: whole the first time, then only what changed.
// An error from visit stops it and is returned.
func (t *treeWatch) walk(root string, visit visitFunc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dirs == nil {
		t.dirs, t.seen = map[string]dirStamp{}, map[string]bool{}
	}
	if !t.seen[root] {
		if err := t.walkWhole(root, visit); err != nil {
			return err
		}
		t.seen[root] = true
		return nil
	}
	now := time.Now()
	var changed []string
	for dir, old := range t.dirs {
		if !within(dir, root) {
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
