package walls

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// state is what the post-command check compares for one path.
type state struct {
	exists bool
	mode   fs.FileMode
	size   int64
	sum    [32]byte // content of regular files up to maxHashed bytes
	info   os.FileInfo
}

const (
	maxHashed  = 1 << 20
	maxWatched = 20_000
)

// gitInterest are the entries of a git directory that can run code or
// redirect git: config (filters, aliases, hooksPath), hooks, info, pointers.
var gitInterest = []string{"config", "hooks", "info", "HEAD", "commondir", "gitdir"}

// Snapshot records the protected paths: for a git directory its config,
// hooks, info and pointers (objects and refs change legitimately); for any
// other carve-out, everything beneath it.
func Snapshot(paths []string) map[string]state {
	out := make(map[string]state)
	n := 0
	for _, root := range paths {
		record(out, root)
		st, err := os.Lstat(root)
		if err != nil || !st.IsDir() {
			continue
		}
		if isGitDir(root) {
			for _, name := range gitInterest {
				walkInto(out, filepath.Join(root, name), &n)
			}
			continue
		}
		walkInto(out, root, &n)
	}
	return out
}

func isGitDir(dir string) bool {
	if filepath.Base(dir) == ".git" {
		return true
	}
	_, e1 := os.Stat(filepath.Join(dir, "HEAD"))
	_, e2 := os.Stat(filepath.Join(dir, "config"))
	return e1 == nil && e2 == nil
}

func walkInto(out map[string]state, root string, n *int) {
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			record(out, path)
			return nil
		}
		*n++
		if *n > maxWatched {
			return fs.SkipAll
		}
		record(out, path)
		return nil
	})
}

func record(out map[string]state, path string) {
	st, err := os.Lstat(path)
	if err != nil {
		out[path] = state{}
		return
	}
	s := state{exists: true, mode: st.Mode(), size: st.Size(), info: st}
	if st.Mode().IsRegular() && st.Size() <= maxHashed {
		if b, err := os.ReadFile(path); err == nil {
			s.sum = sha256.Sum256(b)
		}
	}
	out[path] = s
}

// Changed compares two snapshots and lists the paths that differ.
func Changed(before, after map[string]state) []string {
	var out []string
	for path, b := range before {
		a, ok := after[path]
		if !ok {
			a = state{}
		}
		if differs(b, a) {
			out = append(out, path)
		}
	}
	for path, a := range after {
		if _, ok := before[path]; !ok && a.exists {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}

func differs(a, b state) bool {
	if a.exists != b.exists {
		return true
	}
	if !a.exists {
		return false
	}
	if a.mode != b.mode || a.size != b.size || a.sum != b.sum {
		return true
	}
	return !os.SameFile(a.info, b.info)
}
