//go:build !unix

package walls

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a directory held open as an os.Root; see beneath.go. Without
// descriptor-relative no-follow opens here, a step checks by Lstat that
// no link stands at the name, and os.Root keeps whatever a race slips in
// beneath the directory.
type Dir struct {
	r    *os.Root
	path string
}

// OpenDir opens the directory path to work beneath it.
func OpenDir(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{r: r, path: path}, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return d.r.Close() }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// Sub opens the directory name in d; a symlink there is ErrSymlink.
func (d *Dir) Sub(name string) (*Dir, error) {
	if name == "." {
		r, err := d.r.OpenRoot(".")
		if err != nil {
			return nil, err
		}
		return &Dir{r: r, path: d.path}, nil
	}
	fi, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &LinkError{Path: d.join(name)}
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", d.join(name), ErrNotDir)
	}
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &Dir{r: r, path: d.join(name)}, nil
}

// Stat is what d holds open.
func (d *Dir) Stat() (fs.FileInfo, error) { return d.r.Stat(".") }

// Lstat describes name in d without following it.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return d.r.Lstat(name)
}

// Names lists d's entries, unsorted.
func (d *Dir) Names() ([]string, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// OpenFile opens the regular file name in d for reading; want, when
// given, is the file the caller listed.
func (d *Dir) OpenFile(name string, want fs.FileInfo) (*os.File, fs.FileInfo, error) {
	fi, err := d.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, &LinkError{Path: d.join(name)}
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%s)", d.join(name), ErrNotRegular, kindOf(fi))
	}
	f, err := d.r.Open(name)
	if err != nil {
		return nil, nil, err
	}
	got, err := f.Stat()
	switch {
	case err != nil:
	case !got.Mode().IsRegular():
		err = fmt.Errorf("%s: %w (%s)", d.join(name), ErrNotRegular, kindOf(got))
	case want != nil && !os.SameFile(got, want):
		err = fmt.Errorf("%s: %w", d.join(name), ErrRaced)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, got, nil
}

// Readlink is the target of the symlink name in d.
func (d *Dir) Readlink(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return d.r.Readlink(name)
}

// Remove removes name in d, a file or a link; a directory is refused.
func (d *Dir) Remove(name string) error {
	fi, err := d.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: is a directory", d.join(name))
	}
	return d.r.Remove(name)
}

// RemoveDir removes the empty directory name in d.
func (d *Dir) RemoveDir(name string) error {
	fi, err := d.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %w", d.join(name), ErrNotDir)
	}
	return d.r.Remove(name)
}

// Mkdir makes the directory name in d.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	return d.r.Mkdir(name, perm)
}

// Symlink makes name in d a link to target.
func (d *Dir) Symlink(target, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return d.r.Symlink(target, name)
}

// Chmod sets the mode of d itself.
func (d *Dir) Chmod(mode fs.FileMode) error { return d.r.Chmod(".", mode) }

// CreateTemp creates a new file in d, named prefix and random letters.
func (d *Dir) CreateTemp(prefix string) (*os.File, string, error) {
	for range 10 {
		var rb [6]byte
		rand.Read(rb[:])
		name := prefix + hex.EncodeToString(rb[:])
		f, err := d.r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", &fs.PathError{Op: "create", Path: d.join(prefix + "*"), Err: fs.ErrExist}
}

// Rename renames oldName in d to newName in d.
func (d *Dir) Rename(oldName, newName string) error {
	if err := checkName(oldName); err != nil {
		return err
	}
	if err := checkName(newName); err != nil {
		return err
	}
	return d.r.Rename(oldName, newName)
}

// StatIDs: no device and inode numbers here.
func StatIDs(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
