package gitshadow

import (
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
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// History only grows: refs.
//
// The ref trees (refs/, logs/) and packed-refs are the shadow's own
// copies, not the real ones: a command's ref writes reach the host only
// after the command, once the objects it wrote are in the real object
// directory, and only as far as they keep the repository whole:
//
//   - a ref is set on the host only to an object the host has, with
//     everything it reaches (git rev-list --objects --missing=print from
//     the new tips, not from what the host's refs reach already); one set
//     to a lost object keeps its old value and the loss is reported with
//     the commit id;
//   - refs/replace/ is never changed from inside: a replacement changes
//     what a committed file reads as on the host (git replace), so one a
//     command writes is dropped and reported;
//   - a tag that existed is never moved or deleted from inside: it is
//     put back and the attempt reported;
//   - a branch or notes ref moved off its history or deleted is reported
//     with the commit to return to (RefMove), its objects being kept;
//   - reflog lines naming an object the host does not have are dropped,
//     so git fsck passes.
//
// Refused changes are undone in the shadow too, so git inside sees what
// the host has; while another command of the session still runs (a
// background job) one refused for a missing object is left for the next
// check, the objects may yet arrive.

// refTrees are the data directories a shadow keeps as its own copies.
func (sh *gitShadow) refTrees() []string { return sh.Dirs }

// treeStamps lists the regular files under dir (host path) as
// slash-separated paths relative to base, with their stamps.
func treeStamps(base, dir string) map[string]stamp {
	out := map[string]stamp{}
	_ = filepath.WalkDir(filepath.Join(base, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		if st, err := d.Info(); err == nil {
			out[filepath.ToSlash(rel)] = stampInfo(st)
		}
		return nil
	})
	return out
}

func stampInfo(st fs.FileInfo) stamp {
	if !st.Mode().IsRegular() {
		return stamp{}
	}
	id, _ := walls.SysFileID(st)
	return stamp{exists: true, size: st.Size(), mtime: st.ModTime().UnixNano(), ino: id.Ino}
}

// rootStamps is treeStamps inside the shadow, through root: a link a
// command planted is listed as nothing, never followed.
func rootStamps(root *os.Root, dir string) map[string]stamp {
	out := map[string]stamp{}
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		if depth > 64 {
			return
		}
		ents, err := readRootDir(root, rel)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := rel + "/" + e.Name()
			switch {
			case e.IsDir():
				walk(p, depth+1)
			case e.Type().IsRegular():
				// Info is an lstat by the directory's host path: cheaper
				// than the root's, and a stamp only decides what to read
				// (through the root) next.
				if st, err := e.Info(); err == nil {
					out[p] = stampInfo(st)
				}
			}
		}
	}
	if st, err := root.Lstat(dir); err == nil && st.IsDir() {
		walk(dir, 0)
	}
	return out
}

func rootStamp(root *os.Root, rel string) stamp {
	st, err := root.Lstat(rel)
	if err != nil {
		return stamp{}
	}
	return stampInfo(st)
}

// readRoot reads a regular file under root without following a link or
// blocking on a FIFO.
func readRoot(root *os.Root, rel string, limit int64) ([]byte, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|walls.ONoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// writeRoot replaces rel under root by a new file holding data, making
// its parents; a link or file in the way of a parent is removed.
func writeRoot(root *os.Root, rel string, data []byte) error {
	dir := path.Dir(rel)
	if st, err := root.Lstat(dir); err != nil || !st.IsDir() {
		// Walk down making each part a directory.
		parts := strings.Split(dir, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			if st, err := root.Lstat(p); err == nil && !st.IsDir() {
				_ = root.RemoveAll(p)
			}
			if err := root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	}
	tmp := fmt.Sprintf("%s/.harness-%d", dir, time.Now().UnixNano())
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if st, err := root.Lstat(rel); err == nil && st.IsDir() {
		_ = root.RemoveAll(rel)
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// syncTreesIn copies into the shadow each ref or log file the host
// changed since the last sync, and removes those the host removed. A
// file the shadow changed and the host did not is left to after's check.
func (sh *gitShadow) syncTreesIn(root *os.Root) {
	for _, t := range sh.refTrees() {
		if st, err := root.Lstat(t); err != nil || !st.IsDir() {
			_ = root.RemoveAll(t)
			_ = root.Mkdir(t, 0o755)
		}
		host := treeStamps(sh.Dir, t)
		for rel, hs := range host {
			if strings.HasSuffix(rel, ".lock") {
				continue
			}
			if last, ok := sh.synced[rel]; ok && last.real == hs {
				continue
			}
			data, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, rel), maxGitFile)
			if err != nil || writeRoot(root, rel, data) != nil {
				continue
			}
			sh.synced[rel] = fileStamp{real: hs, shadow: rootStamp(root, rel)}
		}
		for rel := range sh.synced {
			if strings.HasPrefix(rel, t+"/") {
				if _, ok := host[rel]; !ok {
					_ = root.Remove(rel)
					delete(sh.synced, rel)
				}
			}
		}
	}
}

// packedEntry is one line of packed-refs with its peeled line.
type packedEntry struct{ oid, peeled string }

type packedRefs struct {
	header string
	refs   map[string]packedEntry
}

func parsePacked(data []byte) (packedRefs, error) {
	p := packedRefs{refs: map[string]packedEntry{}}
	last := ""
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "#"):
			if p.header == "" {
				p.header = l
			}
		case strings.HasPrefix(l, "^") && isHash(l[1:]) && last != "":
			e := p.refs[last]
			e.peeled = l[1:]
			p.refs[last] = e
		case len(f) == 2 && isHash(f[0]) && validRefName(f[1]) && strings.HasPrefix(f[1], "refs/"):
			p.refs[f[1]] = packedEntry{oid: f[0]}
			last = f[1]
		default:
			return p, fmt.Errorf("packed-refs line %q", l)
		}
	}
	return p, nil
}

func (p packedRefs) bytes() []byte {
	var b bytes.Buffer
	if p.header != "" {
		b.WriteString(p.header + "\n")
	}
	names := make([]string, 0, len(p.refs))
	for n := range p.refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := p.refs[n]
		b.WriteString(e.oid + " " + n + "\n")
		if e.peeled != "" {
			b.WriteString("^" + e.peeled + "\n")
		}
	}
	return b.Bytes()
}

// refValue is a loose ref's content: an object id or "ref: <name>".
func refValue(data []byte) (string, bool) {
	s := strings.TrimSpace(string(data))
	if t, ok := strings.CutPrefix(s, "ref: "); ok {
		return s, strings.HasPrefix(t, "refs/") && validRefName(t)
	}
	return s, isHash(s)
}

// refChange is one ref whose value differs between the host and the
// shadow after a command.
type refChange struct {
	name     string
	old, new string // "" when absent; an object id or "ref: <name>"
	verdict  string // why it is refused; "" when accepted
	lost     bool   // refused because objects it needs are missing
	deferred bool   // refused for now: another command may yet write them
}

// hostState is what the host's git holds for the checks: which objects
// it has, and whether a new tip is whole.
type hostState struct {
	ctx     context.Context
	gitDir  string
	present map[string]bool
	// pending are ids to ask with the next call of have: one host git
	// call for a command's refs, reflogs and index together.
	pending []string
}

// known records ids the host has without asking (a ref's old value).
func (h *hostState) known(oids ...string) {
	if h.present == nil {
		h.present = map[string]bool{}
	}
	for _, o := range oids {
		if isHash(o) {
			h.present[o] = true
		}
	}
}

// have asks the host's git which of oids it holds, in one call.
func (h *hostState) have(oids []string) {
	if h.present == nil {
		h.present = map[string]bool{}
	}
	oids, h.pending = append(h.pending, oids...), nil
	var ask []string
	for _, o := range oids {
		if _, ok := h.present[o]; !ok && isHash(o) && strings.Trim(o, "0") != "" {
			ask = append(ask, o)
			h.present[o] = false
		}
	}
	if len(ask) == 0 {
		return
	}
	out, err := hostGitIn(h.ctx, h.gitDir, strings.Join(ask, "\n")+"\n", "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return
	}
	for _, l := range strings.Split(out, "\n") {
		if isHash(strings.TrimSpace(l)) {
			h.present[strings.TrimSpace(l)] = true
		}
	}
}

func (h *hostState) has(oid string) bool {
	if strings.Trim(oid, "0") == "" {
		return true // the null id of a reflog's first line
	}
	h.have([]string{oid})
	return h.present[oid]
}

// whole reports, for each tip, whether everything it reaches is on the
// host, walking only what the host's refs do not reach already.
func (h *hostState) whole(tips []string) map[string]bool {
	out := map[string]bool{}
	if len(tips) == 0 {
		return out
	}
	ensureEmptyTree(h.gitDir)
	// check walks from tips; every object it lists the host has, which
	// answers the index's question too (its new blobs are the commit's).
	check := func(tips []string) (bool, error) {
		got, err := hostGitIn(h.ctx, h.gitDir, strings.Join(tips, "\n")+"\n",
			"rev-list", "--objects", "--missing=print", "--no-object-names", "--stdin", "--not", "--all")
		if err != nil {
			return false, err
		}
		ok := true
		for _, l := range strings.Split(got, "\n") {
			if m, missing := strings.CutPrefix(l, "?"); missing {
				ok = false
				if h.present != nil {
					h.present[m] = false
				}
			} else {
				h.known(l)
			}
		}
		return ok, nil
	}
	// Most often every tip is there and whole: one call says so.
	if ok, err := check(tips); err == nil && ok {
		for _, t := range tips {
			out[t] = true
		}
		return out
	}
	// Otherwise tip by tip, those the host has.
	var ask []string
	for _, t := range tips {
		if h.has(t) {
			ask = append(ask, t)
		} else {
			out[t] = false
		}
	}
	for _, t := range ask {
		ok, err := check([]string{t})
		// An error here: the host's own refs do not walk (a repository
		// broken before the session); presence is all there is to judge.
		out[t] = ok || err != nil
	}
	return out
}

// syncRefsOut judges and applies, for one shadow, what a command did to
// its refs and packed-refs (see the comment at the top). deferLost leaves
// a ref refused for missing objects as it is in the shadow, unreported.
//
// applied are the changes that reached the host.
func (sh *gitShadow) syncRefsOut(root *os.Root, h *hostState, deferLost bool) (applied []*refChange, notes []string) {
	rs := &refSync{sh: sh, root: root}
	rs.readPacked()
	rs.changedFiles()
	if len(rs.files) == 0 && !rs.packedChanged {
		return nil, rs.notes
	}
	changes := rs.changes()
	judge(changes, h)
	refused := rs.settle(changes, deferLost)
	rs.writeHost(refused)
	rs.undoInside(refused)
	for _, c := range changes {
		if c.verdict == "" && c.new != c.old {
			applied = append(applied, c)
		}
	}
	return applied, rs.notes
}

func verb(c *refChange) string {
	switch {
	case c.new == "":
		return "deleted"
	case c.old == "":
		return "created (at " + c.new + ")"
	}
	return "moved (to " + c.new + ")"
}

// syncLogsOut copies the reflogs a command changed to the host, without
// the lines naming an object the host does not have (git fsck fails on
// them), and removes those it removed.
func (sh *gitShadow) syncLogsOut(root *os.Root, h *hostState) (notes []string) {
	if !Contains(sh.refTrees(), "logs") {
		return nil
	}
	now := rootStamps(root, "logs")
	changed := map[string][]byte{}
	var oids []string
	for rel, st := range now {
		if last, ok := sh.synced[rel]; ok && last.shadow == st {
			continue
		}
		b, err := readRoot(root, rel, maxGitFile)
		if err != nil {
			continue
		}
		changed[rel] = b
		// Most often lines were appended: only those are new to check.
		fresh := b
		if cur, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, rel), maxGitFile); err == nil && bytes.HasPrefix(b, cur) {
			fresh = b[len(cur):]
			for _, l := range strings.Split(string(cur), "\n") {
				if f := strings.Fields(l); len(f) >= 2 {
					h.known(f[0], f[1]) // on the host's reflog already: fsck passed with them
				}
			}
		}
		for _, l := range strings.Split(string(fresh), "\n") {
			if f := strings.Fields(l); len(f) >= 2 {
				oids = append(oids, f[0], f[1])
			}
		}
	}
	h.have(oids)
	dropped := 0
	for rel, b := range changed {
		var keep bytes.Buffer
		for _, l := range strings.SplitAfter(string(b), "\n") {
			f := strings.Fields(l)
			if l == "" {
				continue
			}
			if len(f) < 2 || !isHash(f[0]) || !isHash(f[1]) || !h.has(f[0]) || !h.has(f[1]) {
				dropped++
				continue
			}
			keep.WriteString(l)
		}
		if err := writeFileAtomicMkdir(filepath.Join(sh.Dir, rel), keep.Bytes()); err != nil {
			notes = append(notes, fmt.Sprintf("copying %s to the host: %v", rel, err))
			continue
		}
		if keep.Len() != len(b) {
			_ = writeRoot(root, rel, keep.Bytes())
		}
		sh.synced[rel] = fileStamp{real: stampOf(filepath.Join(sh.Dir, rel)), shadow: rootStamp(root, rel)}
	}
	for rel := range sh.synced {
		if _, ok := now[rel]; !ok && strings.HasPrefix(rel, "logs/") {
			if err := os.Remove(filepath.Join(sh.Dir, rel)); err == nil || errors.Is(err, fs.ErrNotExist) {
				delete(sh.synced, rel)
			}
		}
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d reflog entries written inside name objects the repository does not have; left out", dropped))
	}
	return notes
}

// writeFileAtomicMkdir is writeFileAtomic making the host directories a
// ref's name needs (refs/heads/feature/x).
func writeFileAtomicMkdir(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(p, data)
}

// hostGitIn is hostGitOutput on the real git directory with stdin.
func hostGitIn(ctx context.Context, gitDir, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := gitsafe.Command(ctx, "", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// indexObjects lists the object ids an index names: its entries' and
// its cache tree's (git fsck checks both). ok is false for a layout it
// does not know (git checks those itself when it reads them).
func indexObjects(data []byte, sha256Repo bool) (oids []string, ok bool) {
	hl := 20
	if sha256Repo {
		hl = 32
	}
	if len(data) < 12+hl || string(data[:4]) != "DIRC" {
		return nil, false
	}
	be32 := func(b []byte) int { return int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]) }
	version, count := be32(data[4:]), be32(data[8:])
	if version < 2 || version > 4 {
		return nil, false
	}
	body := data[:len(data)-hl]
	off := 12
	for i := 0; i < count; i++ {
		fixed := 40 + hl + 2
		if off+fixed > len(body) {
			return nil, false
		}
		oids = append(oids, fmt.Sprintf("%x", body[off+40:off+40+hl]))
		flags := int(body[off+40+hl])<<8 | int(body[off+40+hl+1])
		if version >= 3 && flags&0x4000 != 0 {
			fixed += 2
		}
		start := off
		p := off + fixed
		if version == 4 {
			for p < len(body) && body[p]&0x80 != 0 { // the varint of the prefix to strip
				p++
			}
			p++
		}
		end := bytes.IndexByte(body[min(p, len(body)):], 0)
		if end < 0 {
			return nil, false
		}
		p += end + 1
		if version < 4 {
			p = start + (p-start+7)&^7
		}
		off = p
	}
	// Extensions: only the cache tree names objects fsck reads.
	for off+8 <= len(body) {
		sig, size := string(body[off:off+4]), be32(body[off+4:])
		if size < 0 || off+8+size > len(body) {
			return nil, false
		}
		ext := body[off+8 : off+8+size]
		off += 8 + size
		if sig != "TREE" {
			continue
		}
		for len(ext) > 0 {
			nul := bytes.IndexByte(ext, 0)
			nl := bytes.IndexByte(ext, '\n')
			if nul < 0 || nl < nul {
				return nil, false
			}
			n, _, _ := strings.Cut(string(ext[nul+1:nl]), " ")
			ext = ext[nl+1:]
			if !strings.HasPrefix(n, "-") {
				if len(ext) < hl {
					return nil, false
				}
				oids = append(oids, fmt.Sprintf("%x", ext[:hl]))
				ext = ext[hl:]
			}
		}
	}
	return oids, true
}

// queueIndex adds to h's next question the objects the shadow's index
// names that the host's does not, when the command changed it.
func (sh *gitShadow) queueIndex(root *os.Root, h *hostState) {
	if !Contains(sh.Files, "index") {
		return
	}
	ss := rootStamp(root, "index")
	if last, ok := sh.synced["index"]; !ss.exists || ok && last.shadow == ss {
		return
	}
	data, err := readRoot(root, "index", maxGitFile)
	if err != nil {
		return
	}
	h.pending = append(h.pending, sh.indexNew(data, h)...)
}

// indexNew lists the objects data names that the host's index does not.
func (sh *gitShadow) indexNew(data []byte, h *hostState) []string {
	sha := repoUsesSHA256(h.gitDir)
	oids, ok := indexObjects(data, sha)
	if !ok {
		return nil
	}
	known := map[string]bool{}
	if cur, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, "index"), maxGitFile); err == nil {
		old, _ := indexObjects(cur, sha)
		for _, o := range old {
			known[o] = true
		}
	}
	var out []string
	for _, o := range oids {
		if !known[o] {
			out = append(out, o)
		}
	}
	return out
}

// indexMissing returns an object the new index names that the host has
// not, judging only those the host's current index does not name.
func (sh *gitShadow) indexMissing(data []byte, h *hostState) string {
	ask := sh.indexNew(data, h)
	h.have(ask)
	for _, o := range ask {
		if !h.has(o) {
			return o
		}
	}
	return ""
}

// ensureEmptyTree writes the empty tree into the real object directory
// when it is missing: git's own commands treat it as always there (a
// command can name it without writing it, or delete its copy), but git
// fsck wants it stored.
func ensureEmptyTree(gitDir string) {
	sha := repoUsesSHA256(gitDir)
	var h hash.Hash = sha1.New()
	if sha {
		h = sha256.New()
	}
	h.Write([]byte("tree 0\x00"))
	name := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(gitDir, "objects", name[:2])
	if _, err := os.Lstat(filepath.Join(dir, name[2:])); err == nil {
		return
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("tree 0\x00"))
	zw.Close()
	if os.MkdirAll(dir, 0o755) == nil {
		_ = linkNew(dir, name[2:], z.Bytes(), 0o444)
	}
}
