package walls

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Harness's own file work on paths a command can change (undo, the
// checkpoint scan) goes through a Dir: a directory held open by
// descriptor, beneath which every step is one name, opened relative to
// the descriptor and never through a symlink. A command that swaps a
// directory or a file for a link to somewhere else, however fast, makes
// the step fail (ErrSymlink); nothing reached through a Dir is outside
// the directory it was opened from. The directory a caller opens with
// OpenDir is its own choice (a writable root, harness's state) and is
// resolved normally.

// ErrSymlink is returned (wrapped) when a step of a path is a symlink: a
// Dir never follows one.
var ErrSymlink = errors.New("a symlink stands in the path")

// LinkError says which step of a path is a symlink; it is ErrSymlink to
// errors.Is.
type LinkError struct{ Path string }

func (e *LinkError) Error() string { return e.Path + ": " + ErrSymlink.Error() }
func (e *LinkError) Unwrap() error { return ErrSymlink }

// ErrNotDir is returned (wrapped) when a step of a path is not a directory.
var ErrNotDir = errors.New("not a directory")

// checkName refuses what is not a single name in a directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return fmt.Errorf("%q is not a name in a directory", name)
	}
	return nil
}

// Path is where d was reached: the path it was opened by, joined with the
// names walked.
func (d *Dir) Path() string { return d.path }

// OpenPath opens the directory rel beneath d, one name at a time, never
// following a link; with create, missing directories are made (perm) one
// at a time, each in a directory already held. rel "" or "." is d again
// (a new descriptor).
func (d *Dir) OpenPath(rel string, create bool, perm fs.FileMode) (*Dir, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is not beneath %s", rel, d.path)
	}
	cur, err := d.Sub(".")
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return cur, nil
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if create {
			if err := cur.Mkdir(name, perm); err != nil && !errors.Is(err, fs.ErrExist) {
				cur.Close()
				return nil, err
			}
		}
		next, err := cur.Sub(name)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// Under splits p into the root of roots holding it and the path beneath
// it ("." for the root itself); ok is false when no root holds p.
func Under(roots []string, p string) (root, rel string, ok bool) {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
			return r, rel, true
		}
	}
	return "", "", false
}
