//go:build unix

package walls

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is a directory held open by descriptor; see beneath.go.
type Dir struct {
	f    *os.File
	path string
}

// OpenDir opens the directory path (resolved normally: the caller's own
// root) to work beneath it.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// Close releases the descriptor.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// Sub opens the directory name in d; a symlink there is ErrSymlink,
// anything else but a directory ErrNotDir. "." opens d again.
func (d *Dir) Sub(name string) (*Dir, error) {
	if name != "." {
		if err := checkName(name); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, d.classify("open", name, err)
	}
	p := d.path
	if name != "." {
		p = d.join(name)
	}
	return &Dir{f: os.NewFile(uintptr(fd), p), path: p}, nil
}

// classify turns a failed step into ErrSymlink or ErrNotDir when that is
// what stands at name.
func (d *Dir) classify(op, name string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
		if fi, lerr := d.Lstat(name); lerr == nil {
			if fi.Mode()&fs.ModeSymlink != 0 {
				return &LinkError{Path: d.join(name)}
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s: %w", d.join(name), ErrNotDir)
			}
		}
	}
	return &fs.PathError{Op: op, Path: d.join(name), Err: err}
}

// Stat is what d holds open.
func (d *Dir) Stat() (fs.FileInfo, error) { return d.f.Stat() }

// Lstat describes name in d without following it.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return &statInfo{name: name, st: st}, nil
}

// Names lists d's entries, unsorted.
func (d *Dir) Names() ([]string, error) {
	f, err := d.Sub(".") // a descriptor of its own: listing moves its offset
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.f.Readdirnames(-1)
}

// OpenFile opens the regular file name in d for reading: never through a
// symlink, never blocking (a FIFO swapped in opens at once and is refused
// before a byte is read), never as a controlling terminal. want, when
// given, is the file the caller listed: another one there now is ErrRaced.
func (d *Dir) OpenFile(name string, want fs.FileInfo) (*os.File, fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, nil, &LinkError{Path: d.join(name)}
		}
		return nil, nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s: %w (%s)", d.join(name), ErrNotRegular, kindOf(fi))
	case want != nil && !sameFile(fi, want):
		err = fmt.Errorf("%s: %w", d.join(name), ErrRaced)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Readlink is the target of the symlink name in d.
func (d *Dir) Readlink(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(d.fd(), name, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: d.join(name), Err: err}
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<16 {
			return "", &fs.PathError{Op: "readlink", Path: d.join(name), Err: unix.ENAMETOOLONG}
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Remove removes name in d, a file or a link (never what a link points
// to); a directory is refused.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// RemoveDir removes the empty directory name in d.
func (d *Dir) RemoveDir(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// Mkdir makes the directory name in d.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Mkdirat(d.fd(), name, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	return nil
}

// Symlink makes name in d a link to target (the link is made; nothing is
// written through it).
func (d *Dir) Symlink(target, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Symlinkat(target, d.fd(), name); err != nil {
		return &fs.PathError{Op: "symlink", Path: d.join(name), Err: err}
	}
	return nil
}

// Chmod sets the mode of d itself (by its descriptor).
func (d *Dir) Chmod(mode fs.FileMode) error {
	if err := unix.Fchmod(d.fd(), uint32(mode.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return nil
}

// CreateTemp creates a new file in d, named prefix and random letters,
// for writing (mode 0600 until the caller chmods it).
func (d *Dir) CreateTemp(prefix string) (*os.File, string, error) {
	for range 10 {
		var rb [6]byte
		rand.Read(rb[:])
		name := prefix + hex.EncodeToString(rb[:])
		fd, err := unix.Openat(d.fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", &fs.PathError{Op: "create", Path: d.join(name), Err: err}
		}
		return os.NewFile(uintptr(fd), d.join(name)), name, nil
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
	if err := unix.Renameat(d.fd(), oldName, d.fd(), newName); err != nil {
		return &fs.PathError{Op: "rename", Path: d.join(newName), Err: err}
	}
	return nil
}

// statInfo is an fs.FileInfo from fstatat; Sys is the *unix.Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }

func (s *statInfo) Mode() fs.FileMode {
	m := uint32(s.st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// StatIDs are the device and inode of a FileInfo from os or from a Dir.
func StatIDs(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	switch s := fi.Sys().(type) {
	case *unix.Stat_t:
		return uint64(s.Dev), uint64(s.Ino), true
	case *syscall.Stat_t:
		return uint64(s.Dev), uint64(s.Ino), true
	}
	return 0, 0, false
}

func sameFile(a, b fs.FileInfo) bool {
	da, ia, oka := StatIDs(a)
	db, ib, okb := StatIDs(b)
	return oka && okb && da == db && ia == ib
}
