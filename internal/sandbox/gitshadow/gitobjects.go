package gitshadow

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Append-only objects.
//
// Inside, a repository's objects directory is the shadow's own: new
// objects land there, and the real one, mounted read-only at
// objects/.harness-base, is its alternate (objects/info/alternates), so
// git inside sees every object and can add more but cannot remove or
// change one. After each command the host moves what the command added
// into the real directory (importObjects):
//
//   - a loose object only when its content hashes to its name, written
//     to a new file and linked into place, never over an existing one;
//   - a pack only through the host's `git index-pack --strict`, which
//     computes every object's name from the pack's content (as a fetch
//     does with a server's pack), so a pack cannot claim an existing
//     object's name for other content, and refuses a pack linking to
//     an object that is neither in it nor in the repository; the
//     command's own index is never used;
//   - either only once everything it links to is there (links.go).
//
// Everything is read from the shadow through an os.Root with
// O_NONBLOCK, and regular files only: a link planted there cannot make
// the host read outside it, nor a FIFO stall it. Anything else a command
// leaves in its objects directory (commit-graph, info/packs, a bitmap)
// is derived data git rebuilds; it stays in the shadow.

// maxGitObject bounds a loose object or pack the host imports.
const maxGitObject = 4 << 30

func (sh *gitShadow) ObjectsDir() string { return filepath.Join(sh.Shadow, "objects") }

// prepareObjects makes the shadow's objects directory with its mount
// point for the real one and the alternates file naming it.
func (sh *gitShadow) prepareObjects() error {
	for _, d := range []string{"", "info", "pack", inner.GitObjectsBase} {
		if err := os.MkdirAll(filepath.Join(sh.ObjectsDir(), d), 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(sh.Dir, "objects"), 0o755); err != nil {
		return err
	}
	sh.resetAlternates()
	return nil
}

// resetAlternates writes the alternates file anew before each command:
// a command may have changed it, and git inside must keep seeing the
// real objects (the path is the same inside, under the shadow's mount).
func (sh *gitShadow) resetAlternates() {
	info := filepath.Join(sh.ObjectsDir(), "info")
	if st, err := os.Lstat(info); err != nil || !st.IsDir() {
		os.RemoveAll(info)
		os.Mkdir(info, 0o755)
	}
	_, dst := sh.mount.BaseObjects()
	want := []byte(dst + "\n")
	if b, err := walls.ReadFileNoFollow(filepath.Join(info, "alternates"), 1<<16); err == nil && bytes.Equal(b, want) {
		return // as written: most commands leave it alone
	}
	_ = writeFileAtomic(filepath.Join(info, "alternates"), want)
}

// importObjects adds the objects a command wrote to the real repository
// and removes them from the shadow (the real directory, the alternate,
// serves them from then on). notes say what was refused.
func (sh *gitShadow) ImportObjects(ctx context.Context, others bool) (notes []string) {
	if !sh.Objects {
		return nil
	}
	root, err := os.OpenRoot(sh.ObjectsDir())
	if err != nil {
		return []string{fmt.Sprintf("the objects this command wrote could not be read (%v); they are not in the repository", err)}
	}
	defer root.Close()
	real := filepath.Join(sh.Dir, "objects")
	sha256Repo := repoUsesSHA256(sh.Dir)
	ents, err := readRootDir(root, ".")
	if err != nil {
		return nil
	}
	var refused []string
	imp := importer{root: root, real: real, sha256: sha256Repo, store: sh.store, wait: waiting{}}
	hasPack := false
	for _, e := range ents {
		name := e.Name()
		switch {
		case len(name) == 2 && isHex(name) && e.IsDir():
			files, err := readRootDir(root, name)
			if err != nil {
				continue
			}
			for _, f := range files {
				rel := name + "/" + f.Name()
				done, err := imp.loose(rel)
				var bad refusedObject
				var later missingLinks
				switch {
				case errors.As(err, &bad):
					refused = append(refused, fmt.Sprintf("%s (%v)", rel, err))
				case errors.As(err, &later):
					// Waits in imp.wait for what it links to.
				case err != nil:
					// The host could not write it (a full disk): it
					// stays in the shadow, still seen inside, and the
					// next command's import tries again.
					notes = append(notes, fmt.Sprintf("object %s is not in the repository yet: %v", rel, err))
				}
				for _, r := range done {
					_ = root.RemoveAll(r)
				}
				if bad.error != nil {
					_ = root.RemoveAll(rel)
				}
			}
		case name == "pack" && e.IsDir() && !others:
			hasPack = true
		}
	}
	if hasPack {
		// While another command runs, its git may be renaming a pack's
		// files into place: packs wait for the last one. They come after
		// the loose objects their links may name.
		notes = append(notes, importPacks(ctx, root, real, sha256Repo, others)...)
		for _, r := range imp.retryAll() {
			_ = root.RemoveAll(r)
		}
	}
	if !others {
		// Whatever they wait for is not coming: the command ended. (While
		// another runs, they stay in the shadow for the next import.)
		for _, rel := range imp.wait.all() {
			if _, err := imp.loose(rel); err != nil {
				refused = append(refused, fmt.Sprintf("%s (%v)", rel, err))
			}
			_ = root.RemoveAll(rel)
		}
	}
	for _, e := range ents {
		if n := e.Name(); len(n) == 2 && isHex(n) {
			_ = root.Remove(n) // if empty
		}
	}
	if len(refused) > 0 {
		if len(refused) > 5 {
			refused = append(refused[:5], fmt.Sprintf("and %d more", len(refused)-5))
		}
		notes = append(notes, "objects the command wrote that are not what their names say, or that link to objects the repository does not have, were not added to it: "+strings.Join(refused, ", "))
	}
	return notes
}

func readRootDir(root *os.Root, dir string) ([]fs.DirEntry, error) {
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// openRegular opens rel under root for reading only if it is a regular
// file no larger than maxGitObject, without blocking on a FIFO.
func openRegular(root *os.Root, rel string) (*os.File, int64, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errors.New("not a regular file")
	}
	if st.Size() > maxGitObject {
		f.Close()
		return nil, 0, fmt.Errorf("larger than %d bytes", int64(maxGitObject))
	}
	return f, st.Size(), nil
}

// importLoose checks a loose object (rel is "ab/cdef…") against its name
// and links it into real, unless real already holds it, once store
// holds everything it links to (missingLinks until then).
func importLoose(root *os.Root, rel, real string, sha256Repo bool, store *objectStore) error {
	dir, file, _ := strings.Cut(rel, "/")
	want := dir + file
	if !isHex(want) || len(want) != 40 && len(want) != 64 || (len(want) == 64) != sha256Repo {
		return refusedObject{errors.New("not an object name")}
	}
	final := filepath.Join(real, dir, file)
	if _, err := os.Lstat(final); err == nil {
		return nil // already there: never replaced
	}
	f, _, err := openRegular(root, rel)
	if err != nil {
		return refusedObject{err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitObject+1))
	if err != nil {
		return refusedObject{err}
	}
	got, kind, body, err := looseObject(data, sha256Repo)
	if err != nil {
		return refusedObject{err}
	}
	if got != want {
		return refusedObject{errors.New("its content hashes to another name")}
	}
	links, err := objectLinks(kind, body, len(want)/2)
	if err != nil {
		return refusedObject{err}
	}
	if m := store.missing(links); len(m) > 0 {
		return missingLinks{m}
	}
	if err := os.MkdirAll(filepath.Join(real, dir), 0o755); err != nil {
		return err
	}
	return linkNew(filepath.Join(real, dir), file, data, 0o444)
}

// refusedObject is an object the host will not add: not a regular file,
// not an object, or not the object its name says.
type refusedObject struct{ error }

func (r refusedObject) Unwrap() error { return r.error }

// importer imports loose objects, holding back each whose links are
// not in the repository yet until they arrive.
type importer struct {
	root   *os.Root
	real   string // the real objects directory
	sha256 bool
	store  *objectStore
	wait   waiting
}

// loose imports rel and then whatever was waiting for it, and returns
// every rel now in the repository. err is rel's own.
func (im *importer) loose(rel string) (done []string, err error) {
	queue := []string{rel}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		e := importLoose(im.root, r, im.real, im.sha256, im.store)
		if r == rel {
			err = e
		}
		var later missingLinks
		switch {
		case errors.As(e, &later):
			im.wait.add(r, later)
		case e == nil:
			done = append(done, r)
			queue = append(queue, im.wait.arrived(strings.Replace(r, "/", "", 1))...)
		}
	}
	return done, err
}

// retryAll tries every waiting object again (after a pack, whose
// objects are not known one by one).
func (im *importer) retryAll() (done []string) {
	for _, r := range im.wait.all() {
		d, _ := im.loose(r)
		done = append(done, d...)
	}
	return done
}

// waiting maps an object id to the loose objects (rels) waiting for it.
type waiting map[string][]string

func (w waiting) add(rel string, m missingLinks) {
	for _, o := range m.oids {
		w[o] = append(w[o], rel)
	}
}

// arrived returns the rels that waited for oid and forgets them there.
func (w waiting) arrived(oid string) []string {
	rels := w[oid]
	delete(w, oid)
	return rels
}

// all returns every waiting rel once, sorted, and empties w.
func (w waiting) all() []string {
	seen := map[string]bool{}
	var out []string
	for o, rels := range w {
		for _, r := range rels {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		delete(w, o)
	}
	sort.Strings(out)
	return out
}

// looseObject hashes a zlib-compressed loose object as git names it:
// the hash of "<type> <size>\0<content>", checking the header. body is
// the content of a tree, commit or tag (what links), nil for a blob.
func looseObject(compressed []byte, sha256Repo bool) (name, kind string, body []byte, err error) {
	zr, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return "", "", nil, fmt.Errorf("not zlib data: %w", err)
	}
	defer zr.Close()
	br := bufio.NewReader(io.LimitReader(zr, maxGitObject+64))
	header, err := br.ReadString(0)
	if err != nil {
		return "", "", nil, errors.New("no object header")
	}
	kind, size, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	n, perr := strconv.ParseInt(size, 10, 64)
	if !ok || perr != nil || n < 0 || (kind != "blob" && kind != "tree" && kind != "commit" && kind != "tag") {
		return "", "", nil, fmt.Errorf("bad object header %q", header)
	}
	var h hash.Hash = sha1.New()
	if sha256Repo {
		h = sha256.New()
	}
	h.Write([]byte(header))
	var w io.Writer = h
	var content bytes.Buffer
	if kind != "blob" {
		w = io.MultiWriter(h, &content)
	}
	m, err := io.Copy(w, br)
	if err != nil {
		return "", "", nil, fmt.Errorf("corrupt object: %w", err)
	}
	if m != n {
		return "", "", nil, fmt.Errorf("object says %d bytes, holds %d", n, m)
	}
	if kind != "blob" {
		body = content.Bytes()
	}
	return hex.EncodeToString(h.Sum(nil)), kind, body, nil
}

// importPacks indexes each pack a command wrote with the host's git and
// links pack and index into real/pack under the name git computed.
//
// others says another command of the session still runs: its temporary
// files (a pack being written) are left alone.
func importPacks(ctx context.Context, root *os.Root, real string, sha256Repo, others bool) (notes []string) {
	ents, err := readRootDir(root, "pack")
	if err != nil {
		return nil
	}
	for _, e := range ents {
		name := e.Name()
		rel := "pack/" + name
		if !strings.HasSuffix(name, ".pack") {
			if !strings.HasSuffix(name, ".idx") && !others {
				_ = root.RemoveAll(rel) // .rev, .bitmap, .keep, temporary files: derived or git's own
			}
			continue
		}
		if err := importPack(ctx, root, rel, real, sha256Repo); err != nil {
			notes = append(notes, fmt.Sprintf("a pack the command wrote (%s) was not added to the repository: %v", name, err))
		}
		_ = root.Remove(rel)
		_ = root.Remove(strings.TrimSuffix(rel, ".pack") + ".idx")
	}
	return notes
}

func importPack(ctx context.Context, root *os.Root, rel, real string, sha256Repo bool) error {
	f, _, err := openRegular(root, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	tmp, err := os.MkdirTemp(real, ".harness-import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pack := filepath.Join(tmp, "in.pack")
	out, err := os.OpenFile(pack, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(out, io.LimitReader(f, maxGitObject))
	if err := errors.Join(cerr, out.Close()); err != nil {
		return err
	}
	// --strict in the real repository: every object the pack links to
	// must be in the pack or already there (git fsck --full follows the
	// links of unreachable objects too).
	args := []string{"--git-dir=" + filepath.Dir(real), "index-pack", "--strict"}
	if sha256Repo {
		args = append(args, "--object-format=sha256")
	}
	args = append(args, "-o", filepath.Join(tmp, "in.idx"), pack)
	stdout, err := hostGitOutput(ctx, tmp, 5*time.Minute, args...)
	if err != nil {
		return fmt.Errorf("git index-pack: %w", err)
	}
	sum := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stdout), "pack\t"))
	if !isHex(sum) || len(sum) != 40 && len(sum) != 64 {
		return fmt.Errorf("git index-pack printed %q", stdout)
	}
	dst := filepath.Join(real, "pack")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	base := "pack-" + sum
	if _, err := os.Lstat(filepath.Join(dst, base+".idx")); err == nil {
		return nil // the repository has this pack already
	}
	// The pack before its index: git finds packs by their index.
	if err := os.Link(pack, filepath.Join(dst, base+".pack")); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	os.Chmod(filepath.Join(tmp, "in.idx"), 0o444)
	if err := os.Link(filepath.Join(tmp, "in.idx"), filepath.Join(dst, base+".idx")); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// linkNew writes data to a new file in dir and links it in as name,
// which fails rather than replace a file already there.
func linkNew(dir, name string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(dir, ".harness-obj-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	os.Chmod(tmp, mode)
	if err := os.Link(tmp, filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// repoUsesSHA256 reads extensions.objectFormat from a git directory's
// config (the common directory's, where objects live).
func repoUsesSHA256(gitDir string) bool {
	b, err := walls.ReadFileNoFollow(filepath.Join(gitDir, "config"), 1<<20)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.ToLower(strings.ReplaceAll(l, " ", "")), "=")
		if ok && strings.TrimSpace(k) == "objectformat" && strings.TrimSpace(v) == "sha256" {
			return true
		}
	}
	return false
}

func isHex(s string) bool { return s != "" && strings.Trim(s, "0123456789abcdef") == "" }

// hostGitOutput runs the host's git in dir, a fresh harness directory,
// with GIT_* unset and no system or global configuration; the import
// names the real git directory, whose config and hooks no command can
// write, so nothing a command planted can make it run a program.
func hostGitOutput(ctx context.Context, dir string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := gitsafe.Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := gitsafe.Output(cmd)
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
