package gitshadow

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Whole objects only.
//
// git fsck --full follows every object's links, reachable or not: a
// tree whose blob is missing is a broken link however it got there. A
// command can make one on purpose (git mktree --missing, hash-object
// --literally) or by racing the watch (commit, then overwrite the blob
// before the host has read it). So an object enters the real directory
// only when everything it links to is already there: the import defers
// it (missingLinks) until the objects it waits for arrive, and refuses
// it if they never do. git writes objects before what links to them
// (blobs, then trees bottom-up, then the commit), so in the common case
// nothing waits.

// missingLinks is an object held back because objects it links to are
// not in the real repository yet.
type missingLinks struct{ oids []string }

func (m missingLinks) Error() string {
	return fmt.Sprintf("it links to %d object(s) the repository does not have (%s)", len(m.oids), m.oids[0])
}

// objectLinks lists what a tree, commit or tag links to, as git fsck
// follows it. A tree's submodule entries (gitlinks) name commits of
// another repository and are not followed.
func objectLinks(kind string, body []byte, hashLen int) ([]string, error) {
	switch kind {
	case "tree":
		var out []string
		for len(body) > 0 {
			sp := bytes.IndexByte(body, ' ')
			nul := bytes.IndexByte(body, 0)
			if sp <= 0 || nul < sp || len(body) < nul+1+hashLen {
				return nil, errors.New("malformed tree")
			}
			mode := string(body[:sp])
			id := hex.EncodeToString(body[nul+1 : nul+1+hashLen])
			body = body[nul+1+hashLen:]
			if mode != "160000" {
				out = append(out, id)
			}
		}
		return out, nil
	case "commit", "tag":
		var out []string
		for _, line := range strings.Split(string(body), "\n") {
			if line == "" {
				break // the header ends at the first empty line
			}
			k, v, _ := strings.Cut(line, " ")
			if (kind == "commit" && (k == "tree" || k == "parent")) || (kind == "tag" && k == "object") {
				if len(v) != 2*hashLen || !isHex(v) {
					return nil, fmt.Errorf("malformed %s line %q", k, line)
				}
				out = append(out, v)
			}
		}
		return out, nil
	}
	return nil, nil
}

// objectStore answers whether the real repository holds an object: a
// loose file, an entry in one of its packs' indexes, or either in an
// alternate it names. Everything it reads is the real repository's,
// which no command can write.
type objectStore struct {
	mu      sync.Mutex
	gitDir  string
	hashLen int
	dirs    []string // the objects directory, then its alternates
	packs   map[string]*packIndex
	listed  map[string]time.Time // pack directory → mtime when listed
}

func newObjectStore(gitDir string, sha256Repo bool) *objectStore {
	s := &objectStore{gitDir: gitDir, hashLen: 20, packs: map[string]*packIndex{}, listed: map[string]time.Time{}}
	if sha256Repo {
		s.hashLen = 32
	}
	s.dirs = alternates(filepath.Join(gitDir, "objects"), 5)
	return s
}

// alternates is dir and the object directories its info/alternates
// names, recursively as git reads them (depth bounded as git's is).
func alternates(dir string, depth int) []string {
	out := []string{dir}
	if depth == 0 {
		return out
	}
	b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(dir, l)
		}
		out = append(out, alternates(filepath.Clean(l), depth-1)...)
	}
	return out
}

// missing returns the oids the repository does not hold.
func (s *objectStore) missing(oids []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, o := range oids {
		if !s.has(o) {
			out = append(out, o)
		}
	}
	return out
}

func (s *objectStore) has(oid string) bool {
	if len(oid) != 2*s.hashLen {
		return false
	}
	for _, d := range s.dirs {
		if _, err := os.Lstat(filepath.Join(d, oid[:2], oid[2:])); err == nil {
			return true
		}
	}
	raw, _ := hex.DecodeString(oid)
	for relisted := false; ; relisted = true {
		for _, p := range s.packs {
			if p.has(raw) {
				return true
			}
		}
		if relisted || !s.relist() {
			break
		}
	}
	if oid == emptyTree(s.hashLen == 32) {
		// git treats it as always there; fsck wants it stored.
		ensureEmptyTree(s.gitDir)
		return true
	}
	return false
}

// relist reads the pack directories whose mtime changed since they were
// last read, and says whether any did.
func (s *objectStore) relist() bool {
	changed := false
	for _, d := range s.dirs {
		pd := filepath.Join(d, "pack")
		st, err := os.Stat(pd)
		if err != nil || st.ModTime().Equal(s.listed[pd]) {
			continue
		}
		s.listed[pd] = st.ModTime()
		changed = true
		ents, err := os.ReadDir(pd)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
				continue
			}
			p := filepath.Join(pd, n)
			if _, ok := s.packs[p]; ok {
				continue
			}
			if idx, err := openPackIndex(p, s.hashLen); err == nil {
				s.packs[p] = idx
			}
		}
	}
	return changed
}

// packIndex looks names up in a pack's .idx (version 1 or 2), by the
// fanout table and a binary search of the sorted names; a small index
// is read whole, a large one read where the search looks.
type packIndex struct {
	r       io.ReaderAt
	fanout  [256]uint32
	names   int64 // offset of the first name
	stride  int64 // bytes from one name to the next
	hashLen int
}

func openPackIndex(path string, hashLen int) (*packIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	var r io.ReaderAt = f
	if st.Size() <= 16<<20 {
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	// The descriptor of a large index stays open for the session: the
	// file is the real repository's, and its pack may be deleted by a
	// gc on the host, which the open descriptor survives.
	idx := &packIndex{r: r, hashLen: hashLen}
	head := make([]byte, 8+256*4)
	if _, err := r.ReadAt(head, 0); err != nil {
		return nil, err
	}
	fan := head[:256*4]
	idx.names, idx.stride = 256*4, int64(4+hashLen) // version 1: offset, name
	if bytes.Equal(head[:4], []byte{0xff, 't', 'O', 'c'}) {
		if binary.BigEndian.Uint32(head[4:8]) != 2 {
			return nil, errors.New("unknown pack index version")
		}
		fan = head[8:]
		idx.names, idx.stride = 8+256*4, int64(hashLen)
	}
	for i := range idx.fanout {
		idx.fanout[i] = binary.BigEndian.Uint32(fan[4*i:])
	}
	return idx, nil
}

func (p *packIndex) has(raw []byte) bool {
	if len(raw) != p.hashLen {
		return false
	}
	lo := uint32(0)
	if raw[0] > 0 {
		lo = p.fanout[raw[0]-1]
	}
	hi := p.fanout[raw[0]]
	buf := make([]byte, p.hashLen)
	first := p.names
	if p.stride != int64(p.hashLen) {
		first += 4 // version 1: the name follows each entry's offset
	}
	i := sort.Search(int(hi-lo), func(i int) bool {
		if _, err := p.r.ReadAt(buf, first+int64(lo+uint32(i))*p.stride); err != nil {
			return true
		}
		return bytes.Compare(buf, raw) >= 0
	})
	if i >= int(hi-lo) {
		return false
	}
	if _, err := p.r.ReadAt(buf, first+int64(lo+uint32(i))*p.stride); err != nil {
		return false
	}
	return bytes.Equal(buf, raw)
}

// emptyTree is the empty tree's id in a repository of that hash.
func emptyTree(sha256Repo bool) string {
	if sha256Repo {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}
