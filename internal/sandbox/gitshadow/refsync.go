package gitshadow

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// refSync is one shadow's refs being synced out after a command.
type refSync struct {
	sh   *gitShadow
	root *os.Root
	// packed-refs: the host's, the shadow's, and whether the command
	// changed it (hasPacked: the shadow carries one at all).
	hasPacked, packedChanged bool
	hostPacked, shadowPacked packedRefs
	finalPacked              packedRefs        // what the host gets (settle)
	files                    map[string]bool   // loose ref files changed: rel → present in the shadow
	looseShadow              map[string]string // their values in the shadow
	notes                    []string
}

// readPacked reads the host's packed-refs and, when the command changed
// the shadow's, that one.
func (rs *refSync) readPacked() {
	sh, root := rs.sh, rs.root
	rs.hasPacked = Contains(sh.Files, "packed-refs")
	rs.hostPacked.refs, rs.shadowPacked.refs = map[string]packedEntry{}, map[string]packedEntry{}
	if !rs.hasPacked {
		return
	}
	if b, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, "packed-refs"), maxGitFile); err == nil {
		rs.hostPacked, _ = parsePacked(b)
	}
	rs.shadowPacked = rs.hostPacked
	ss := rootStamp(root, "packed-refs")
	if last, ok := sh.synced["packed-refs"]; ok && last.shadow == ss {
		return
	}
	rs.packedChanged = true
	if !ss.exists {
		rs.shadowPacked = packedRefs{header: rs.hostPacked.header, refs: map[string]packedEntry{}}
	} else if b, err := readRoot(root, "packed-refs", maxGitFile); err != nil {
		rs.notes = append(rs.notes, fmt.Sprintf("packed-refs written inside was not read: %v; the host's is kept", err))
		rs.packedChanged = false
	} else if p, err := parsePacked(b); err != nil {
		rs.notes = append(rs.notes, fmt.Sprintf("packed-refs written inside is not git's (%v); the host's is kept", err))
		rs.packedChanged = false
	} else {
		rs.shadowPacked = p
	}
}

// changedFiles finds the loose ref files the command changed, added or
// removed.
func (rs *refSync) changedFiles() {
	rs.files = map[string]bool{}
	now := rootStamps(rs.root, "refs")
	for rel, st := range now {
		if last, ok := rs.sh.synced[rel]; !ok || last.shadow != st {
			rs.files[rel] = true
		}
	}
	for rel := range rs.sh.synced {
		if _, ok := now[rel]; !ok && strings.HasPrefix(rel, "refs/") {
			rs.files[rel] = false
		}
	}
}

// changes lists every ref whose value the command changed, loose or
// packed, with its old (the host's) and new (the shadow's) value, sorted.
func (rs *refSync) changes() []*refChange {
	names := map[string]bool{}
	for rel := range rs.files {
		names[rel] = true
	}
	if rs.packedChanged {
		for n, e := range rs.shadowPacked.refs {
			if rs.hostPacked.refs[n] != e {
				names[n] = true
			}
		}
		for n := range rs.hostPacked.refs {
			if _, ok := rs.shadowPacked.refs[n]; !ok {
				names[n] = true
			}
		}
	}
	rs.looseShadow = map[string]string{}
	var changes []*refChange
	for n := range names {
		c := &refChange{name: n}
		if b, err := walls.ReadFileNoFollow(filepath.Join(rs.sh.Dir, n), 4096); err == nil {
			c.old, _ = refValue(b)
		} else if e, ok := rs.hostPacked.refs[n]; ok {
			c.old = e.oid
		}
		if present := rs.files[n]; present {
			b, err := readRoot(rs.root, n, 4096)
			v, ok := refValue(b)
			if err != nil || !ok {
				c.new, c.verdict = c.old, fmt.Sprintf("%s written inside is not a ref; the host's is kept", n)
			} else {
				c.new = v
				rs.looseShadow[n] = v
			}
		} else if e, ok := rs.shadowPacked.refs[n]; ok {
			c.new = e.oid
		}
		if !validRefName(n) {
			c.verdict = fmt.Sprintf("%q is not a valid ref name; not copied to the host", n)
		}
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].name < changes[j].name })
	return changes
}

// judge gives each change its verdict: objects first, in one call each
// (presence, then wholeness), then the rules for replacements, tags and
// tips whose objects are gone.
func judge(changes []*refChange, h *hostState) {
	var tips []string
	for _, c := range changes {
		h.known(c.old) // the host's ref is at it
		if c.verdict == "" && c.new != c.old && isHash(c.new) {
			tips = append(tips, c.new)
		}
	}
	whole := h.whole(tips)
	for _, c := range changes {
		if c.verdict != "" || c.new == c.old {
			continue
		}
		switch {
		case strings.HasPrefix(c.name, "refs/replace/"):
			c.verdict = fmt.Sprintf("%s (a replacement: it changes what git shows for %s) was %s inside; dropped, the host's git reads the repository as committed",
				c.name, strings.TrimPrefix(c.name, "refs/replace/"), verb(c))
		case strings.HasPrefix(c.name, "refs/tags/") && c.old != "":
			c.verdict = fmt.Sprintf("tag %s was %s inside; it is put back at %s (move or delete a tag from your own terminal)",
				strings.TrimPrefix(c.name, "refs/tags/"), verb(c), c.old)
		case isHash(c.new) && !whole[c.new]:
			c.lost = true
			was := "it did not exist before"
			if c.old != "" {
				was = "it stays at " + c.old
			}
			c.verdict = fmt.Sprintf("%s was set to %s inside, but that commit or objects it needs were deleted before harness could keep them; %s", c.name, c.new, was)
		}
	}
}

// settle decides what reaches the host: the shadow's packed-refs with
// each refused ref kept at the host's value, and the loose files less the
// refused (or, with deferLost, deferred) ones. It returns the refused.
func (rs *refSync) settle(changes []*refChange, deferLost bool) (refused []*refChange) {
	rs.finalPacked = rs.shadowPacked
	if rs.hasPacked {
		rs.finalPacked = packedRefs{header: rs.shadowPacked.header, refs: map[string]packedEntry{}}
		for n, e := range rs.shadowPacked.refs {
			rs.finalPacked.refs[n] = e
		}
	}
	keepHosts := func(name string) {
		if e, ok := rs.hostPacked.refs[name]; ok {
			rs.finalPacked.refs[name] = e
		} else {
			delete(rs.finalPacked.refs, name)
		}
		delete(rs.files, name)
	}
	for _, c := range changes {
		if c.verdict == "" {
			continue
		}
		if c.lost && deferLost {
			c.deferred = true // neither applied nor undone: checked again after the next command
			keepHosts(c.name)
			continue
		}
		refused = append(refused, c)
		rs.notes = append(rs.notes, c.verdict)
		keepHosts(c.name)
	}
	return refused
}

// writeHost writes the host's refs: loose files first, then packed-refs,
// then removals, so a reader on the host never finds a ref missing
// half-way.
func (rs *refSync) writeHost(refused []*refChange) {
	sh, root := rs.sh, rs.root
	var removals []string
	for rel, present := range rs.files {
		if !present {
			removals = append(removals, rel)
			continue
		}
		if err := writeFileAtomicMkdir(filepath.Join(sh.Dir, rel), []byte(rs.looseShadow[rel]+"\n")); err != nil {
			rs.notes = append(rs.notes, fmt.Sprintf("copying %s to the host: %v", rel, err))
			continue
		}
		sh.synced[rel] = fileStamp{real: stampOf(filepath.Join(sh.Dir, rel)), shadow: rootStamp(root, rel)}
	}
	if rs.hasPacked && (rs.packedChanged || len(refused) > 0) {
		data := rs.finalPacked.bytes()
		if len(rs.finalPacked.refs) == 0 && rs.finalPacked.header == "" {
			data = nil
		}
		cur, _ := walls.ReadFileNoFollow(filepath.Join(sh.Dir, "packed-refs"), maxGitFile)
		if !bytes.Equal(cur, data) {
			if err := writeFileAtomic(filepath.Join(sh.Dir, "packed-refs"), data); err != nil {
				rs.notes = append(rs.notes, fmt.Sprintf("copying packed-refs to the host: %v", err))
			}
		}
	}
	for _, rel := range removals {
		if err := os.Remove(filepath.Join(sh.Dir, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			rs.notes = append(rs.notes, fmt.Sprintf("removing %s on the host: %v", rel, err))
			continue
		}
		delete(sh.synced, rel)
	}
}

// undoInside sets each refused ref back inside to the host's file (or
// none), and packed-refs with them.
func (rs *refSync) undoInside(refused []*refChange) {
	sh, root := rs.sh, rs.root
	for _, c := range refused {
		if b, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, c.name), 4096); err == nil {
			if writeRoot(root, c.name, b) == nil {
				sh.synced[c.name] = fileStamp{real: stampOf(filepath.Join(sh.Dir, c.name)), shadow: rootStamp(root, c.name)}
			}
		} else {
			_ = root.Remove(c.name)
			delete(sh.synced, c.name)
		}
	}
	if !rs.hasPacked {
		return
	}
	if len(refused) > 0 {
		if b, err := walls.ReadFileNoFollow(filepath.Join(sh.Dir, "packed-refs"), maxGitFile); err == nil {
			_ = writeRoot(root, "packed-refs", b)
		} else {
			_ = root.Remove("packed-refs")
		}
	}
	sh.synced["packed-refs"] = fileStamp{real: stampOf(filepath.Join(sh.Dir, "packed-refs")), shadow: rootStamp(root, "packed-refs")}
}
