package walls

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The file tools' I/O runs here, descriptor-based, so that what the policy
// checked is what is read or written: open first, then check the opened
// file's real path and type (never check a path and reopen it by name, which
// a sandboxed process racing a symlink swap wins). Writes go through a chain
// of directory descriptors held beneath a writable root, each checked once
// opened, and land by a temporary file and a rename relative to the last.

// ErrNotRegular is returned (wrapped) when a file tool is pointed at a
// directory, device, FIFO, socket or terminal: only regular files are read
// or written, so nothing blocks or streams forever.
var ErrNotRegular = errors.New("not a regular file")

// ErrRaced is returned (wrapped) when the file changed between being opened
// and being checked: something is swapping it.
var ErrRaced = errors.New("the path changed while it was being opened")

// SizeError says a file is larger than the caller's bound.
type SizeError struct {
	Path        string
	Size, Limit int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit of the file tools", e.Path, e.Size, e.Limit)
}

// DeniedError is a policy refusal.
type DeniedError struct {
	Path, Reason string
}

func (e *DeniedError) Error() string { return e.Reason }

func denied(path, format string, args ...any) error {
	return &DeniedError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// kernelViews are trees whose files the host-side tools never open: /proc
// and /sys show the harness's own process (its environment holds API keys)
// and kernel data a sandboxed command sees only through its own namespaces;
// /dev holds devices. Commands read them inside the walls instead.
var kernelViews = []string{"/proc", "/sys", "/dev"}

// checkOpened applies the read rules to a file already open: its real
// path, type and, when the harness runs as root, the permission bits a
// command (which holds no capabilities) would face.
func (p *Policy) checkOpened(f *os.File, real string) (os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var id *fileID
	if i, ok := identify(fi); ok {
		id = &i
	}
	if err := p.checkRead(real, real, id); err != nil {
		return nil, err
	}
	for _, v := range kernelViews {
		if isUnixLike && Within(real, v) {
			return nil, denied(real, "%s is a kernel or device view; the file tools read only ordinary files (use bash, inside the sandbox)", real)
		}
	}
	if !fi.Mode().IsRegular() {
		return fi, fmt.Errorf("%s: %w (%s)", real, ErrNotRegular, kindOf(fi))
	}
	if err := unprivilegedRead(real, fi); err != nil {
		return fi, err
	}
	return fi, nil
}

func kindOf(fi os.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

// OpenRead opens a regular file for a file tool and returns it with its
// real path and metadata. The opened file, not the path, is what is
// checked: its real path against the policy, its type (a device, FIFO or
// terminal is refused before a byte is read, and opening never blocks).
func (p *Policy) OpenRead(path string) (*os.File, string, os.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", nil, err
	}
	// Fail fast, with the policy's own words, on what is refused by name.
	if err := p.CheckRead(abs); err != nil {
		return nil, "", nil, err
	}
	h, real, err := openHandle(abs)
	if err != nil {
		return nil, "", nil, err
	}
	fi, err := p.checkOpened(h, real)
	if err != nil {
		h.Close()
		return nil, real, fi, err
	}
	f, err := reopenRead(h)
	if err != nil {
		return nil, real, fi, err
	}
	return f, real, fi, nil
}

// ReadFile reads a regular file for a file tool, at most limit bytes: a
// larger file is a *SizeError at once, before anything is read, and a file
// that grows while being read is cut at the bound.
func (p *Policy) ReadFile(path string, limit int64) (data []byte, real string, err error) {
	f, real, fi, err := p.OpenRead(path)
	if err != nil {
		return nil, real, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, real, &SizeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, real, err
	}
	if int64(len(data)) > limit {
		return nil, real, &SizeError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return data, real, nil
}

// WriteResult is what a file-tool write did.
type WriteResult struct {
	Real    string // the real path written
	Created bool   // the file did not exist before
	// Tampered lists protected paths that changed while the write ran (the
	// tamper check commands get, around the file tools too).
	Tampered []string
	// Found lists repositories and hooks paths that appeared (see Refresh).
	Found []Finding
}

// writeFile replaces path's content atomically for a file tool. The path
// is resolved (a link to a file in the project writes that file), checked,
// and then reached through directory descriptors beneath its writable
// root, each opened without leaving the directory before it and checked by
// its real path; the content goes to a temporary file in the last one and
// is renamed over the name relative to it. Missing parent directories are
// created one at a time, each in a checked directory. An existing file
// keeps its mode.
func (p *Policy) writeFile(path string, data []byte) (WriteResult, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return WriteResult{}, err
	}
	if err := p.CheckWrite(abs); err != nil {
		return WriteResult{}, err
	}
	real := resolve(abs)
	root := p.writableRootOf(real)
	if root == "" {
		return WriteResult{}, denied(path, "%s is outside the writable roots (%s): only the project is writable", path, strings.Join(p.writable, ", "))
	}
	before := Snapshot(p.protected)
	res, err := p.writeBeneath(root, real, data)
	res.Tampered = Changed(before, Snapshot(p.protected))
	return res, err
}

func (p *Policy) writableRootOf(real string) string {
	for _, w := range p.writable {
		if Within(real, w) {
			return w
		}
	}
	return ""
}

func (p *Policy) writeBeneath(root, real string, data []byte) (WriteResult, error) {
	res := WriteResult{Real: real}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return res, denied(real, "%s is not a file beneath %s", real, root)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return res, err
	}
	defer func() { dir.Close() }()
	dirReal := root
	parts := strings.Split(rel, string(filepath.Separator))
	name := parts[len(parts)-1]
	for _, part := range parts[:len(parts)-1] {
		if err := dir.Mkdir(part, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return res, err
		}
		// OpenRoot of one name refuses a link that leads out of dir, so
		// each step only goes down; the real path is then checked anew.
		next, err := dir.OpenRoot(part)
		if err != nil {
			return res, fmt.Errorf("%s: %w", filepath.Join(dirReal, part), err)
		}
		dir.Close()
		dir = next
		if dirReal, err = rootRealPath(dir, filepath.Join(dirReal, part)); err != nil {
			return res, err
		}
		if err := p.CheckWrite(filepath.Join(dirReal, name)); err != nil {
			return res, err
		}
	}
	if dirReal, err = rootRealPath(dir, dirReal); err != nil {
		return res, err
	}
	target := filepath.Join(dirReal, name)
	res.Real = target
	if err := p.CheckWrite(target); err != nil {
		return res, err
	}
	if gitShaped(dir) && gitName(name) {
		return res, denied(target, "%s is in a directory shaped like a git repository (HEAD, config, objects); harness does not write there", target)
	}
	mode := os.FileMode(0o644)
	switch fi, err := dir.Lstat(name); {
	case err == nil && fi.Mode().IsRegular():
		mode = fi.Mode().Perm()
	case err == nil && fi.Mode()&fs.ModeSymlink == 0:
		return res, fmt.Errorf("%s: %w (%s)", target, ErrNotRegular, kindOf(fi))
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return res, err
	}
	var rb [6]byte
	rand.Read(rb[:])
	tmp := ".harness-write-" + hex.EncodeToString(rb[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return res, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode) // fchmod: the temporary file itself
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		return res, err
	}
	return res, nil
}

// gitName is a file name that makes or configures a repository.
func gitName(name string) bool {
	switch name {
	case "HEAD", "config", "commondir", "gitdir", "packed-refs":
		return true
	}
	return false
}

// gitShaped reports a directory git would take for a repository: HEAD,
// config or objects already there (two of the three).
func gitShaped(dir *os.Root) bool {
	n := 0
	for _, e := range []string{"HEAD", "config", "objects"} {
		if _, err := dir.Lstat(e); err == nil {
			n++
		}
	}
	return n >= 2
}

// rootRealPath is the real path of the directory dir holds open; want is
// what it should be, for platforms that cannot ask the descriptor.
func rootRealPath(dir *os.Root, want string) (string, error) {
	f, err := dir.Open(".")
	if err != nil {
		return "", err
	}
	defer f.Close()
	return fdRealPath(f, want)
}

// realPathBySameFile resolves want and accepts it only when it names the
// file f has open: a path swapped in between shows as another file.
func realPathBySameFile(f *os.File, want string) (string, error) {
	r := resolve(want)
	a, err1 := f.Stat()
	b, err2 := os.Stat(r)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return "", fmt.Errorf("%s: %w", want, ErrRaced)
	}
	return r, nil
}

// WalkFunc is called by Walk for each entry beneath the root, with its
// path (the root joined with the names walked) and its entry as listed.
// Returning fs.SkipDir for a directory skips it; fs.SkipAll or another
// error stops the walk.
type WalkFunc func(path string, d fs.DirEntry) error

// Walk lists the tree beneath root for the file tools (glob, grep) the
// way the policy allows: a directory whose real path is a secret is not
// entered, and each directory is opened relative to its parent's
// descriptor without following a link, so swapping a directory for a
// link mid-walk leads nowhere. Files are not opened: read them with
// OpenRead. Unreadable directories are skipped.
func (p *Policy) Walk(ctx context.Context, root string, fn WalkFunc) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if err := p.CheckRead(abs); err != nil {
		return err
	}
	d, err := os.Open(abs)
	if err != nil {
		return err
	}
	real, err := fdRealPath(d, abs)
	if err == nil {
		err = p.CheckRead(real)
	}
	if err != nil {
		d.Close()
		return err
	}
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		d.Close()
		return fmt.Errorf("%s is not a directory", root)
	}
	err = p.walkDir(ctx, d, abs, real, fn)
	if errors.Is(err, fs.SkipAll) || errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

func (p *Policy) walkDir(ctx context.Context, d *os.File, path, real string, fn WalkFunc) error {
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		sub, subReal := filepath.Join(path, e.Name()), filepath.Join(real, e.Name())
		if e.IsDir() && p.CheckRead(subReal) != nil {
			continue
		}
		err := fn(sub, e)
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if !e.IsDir() {
			continue
		}
		child, err := openDirBeneath(d, e.Name())
		if err != nil {
			continue // swapped for a link, or unreadable: not entered
		}
		if err := p.walkDir(ctx, child, sub, subReal, fn); err != nil {
			return err
		}
	}
	return nil
}
