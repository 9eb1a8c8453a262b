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
type projectDisk struct{ pol *walls.Policy }

func (d projectDisk) Sum(path string, size int) ([sha256.Size]byte, bool) {
	var none [sha256.Size]byte
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.pol.Project, path)
	}
	if !inside(d.pol.Project, filepath.Clean(path)) {
		return none, false
	}
	data, real, err := d.pol.ReadFile(path, int64(size)+1)
	if err != nil || len(data) != size || !inside(d.pol.Project, real) {
		return none, false
	}
	return sha256.Sum256(data), true
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
