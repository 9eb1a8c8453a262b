package app

import (
	"crypto/sha256"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// projectDisk answers history's input strip from the project's files, as
// the file tools read them (through the policy: the opened file is
// checked, not the path). Only files inside the project count: the
// sandbox's /tmp is private, so the host's file at the same path is
// another file, and a path that resolves outside (a symlink) may be too.
type projectDisk struct{ live walls.Source }

func (d projectDisk) Sum(path string, size int) ([sha256.Size]byte, bool) {
	var none [sha256.Size]byte
	pol := d.live.Policy()
	if !filepath.IsAbs(path) {
		path = filepath.Join(pol.Project(), path)
	}
	if !inside(pol.Project(), filepath.Clean(path)) {
		return none, false
	}
	data, real, err := pol.ReadFile(path, int64(size)+1)
	if err != nil || len(data) != size || !inside(pol.Project(), real) {
		return none, false
	}
	return sha256.Sum256(data), true
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
