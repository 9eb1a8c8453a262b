package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Other sessions in the same project. Their journals sit beside this
// one (checkpoints/<session>.jsonl), and a session with a call in flight
// says so in checkpoints/running/<session>: its pid, when the call began
// and, for a file tool, the one path it writes. A scan cannot tell who
// made a change, so a change found after a command is the command's
// only when no other session could have made it:
//
//   - a path another session's file tool wrote in the window (its entry
//     is exact: the tool names its one path) is that session's, never
//     this call's;
//   - a path another session's command also found changed in an
//     overlapping window, or any change while another session's command
//     is still running, is shared: it is journaled with the other
//     session named, and undo leaves it alone (saying whose it may be)
//     unless that session's own record, complete by then, shows it did
//     not touch the path, or --force.
//
// A person editing a file while a command runs is not a session: the
// command's write set (wrote.go) tells that change from the command's
// where the sandbox knows it; where not, it is taken as the command's.

// marker is what checkpoints/running/<session> holds.
type marker struct {
	PID   int       `json:"pid"`
	Start time.Time `json:"start"`
	// The call, for recoverKilled.
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Turn   int    `json:"turn,omitempty"`
	// Paths, for a file tool, are the only paths the call writes.
	Paths []string `json:"paths,omitempty"`
}

func runningDir(journal string) string { return filepath.Join(filepath.Dir(journal), "running") }

// markerPath is where journal's session says it has a call in flight.
func markerPath(journal string) string { return filepath.Join(runningDir(journal), sessionOf(journal)) }

// sessionOf is the session a journal belongs to (Journal's inverse).
func sessionOf(journal string) string {
	return strings.TrimSuffix(filepath.Base(journal), ".jsonl")
}

// mark says this session has a call in flight (m), or none (nil).
func (s *Store) mark(m *marker) {
	p := markerPath(s.dir)
	if m == nil {
		os.Remove(p)
		return
	}
	if err := os.MkdirAll(runningDir(s.dir), 0o700); err != nil {
		return
	}
	b, _ := json.Marshal(m)
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, p)
	}
}

// peer is another session's activity during a window.
type peer struct {
	running *marker // a call of its in flight now
	// wrote is what the running call's command was seen asking to write
	// so far (its write journal), when known: it claims those paths only.
	wrote      []string
	wroteKnown bool
	entries    []Entry // its calls that ended in the window
}

// peers finds the other sessions active since start: a call in flight
// now (by a live process), or a checkpoint that ended after start.
func (s *Store) peers(start time.Time) map[string]*peer {
	out := map[string]*peer{}
	self := sessionOf(s.dir)
	get := func(id string) *peer {
		if out[id] == nil {
			out[id] = &peer{}
		}
		return out[id]
	}
	if ents, err := os.ReadDir(runningDir(s.dir)); err == nil {
		for _, e := range ents {
			id := e.Name()
			if id == self || strings.HasSuffix(id, ".tmp") || strings.HasSuffix(id, ".writes") {
				continue
			}
			p := filepath.Join(runningDir(s.dir), id)
			b, err := os.ReadFile(p)
			var m marker
			if err != nil || json.Unmarshal(b, &m) != nil {
				continue // gone
			}
			if !alive(m.PID) {
				// Killed mid-call: its call was in flight in this window
				// if it still lived after the window began (its last
				// heartbeat), and then changed what nobody knows yet.
				if last, ok := lastAlive(p); !ok || last.Before(start) {
					continue
				}
			}
			get(id).setRunning(filepath.Join(filepath.Dir(s.dir), id+".jsonl"), &m)
		}
	}
	journals, _ := filepath.Glob(filepath.Join(filepath.Dir(s.dir), "*.jsonl"))
	for _, j := range journals {
		id := sessionOf(j)
		if id == self {
			continue
		}
		if fi, err := os.Stat(j); err != nil || fi.ModTime().Before(start.Add(-time.Second)) {
			continue
		}
		entries, _ := readJournal(j)
		for _, e := range entries {
			if !e.damaged && e.Tool != "undo" && !e.Time.Before(start) {
				get(id).entries = append(get(id).entries, e)
			}
		}
	}
	return out
}

// attribute takes out of changes, found after a call that ran from
// start, what other sessions made (their file tools' exact entries), and
// names on the rest each session that may have made them too.
func attribute(changes []Change, peers map[string]*peer) []Change {
	out := changes[:0]
	for _, c := range changes {
		theirs := false
		var shared []string
		for id, p := range peers {
			switch claim := p.claims(c); claim {
			case claimExact:
				theirs = true
			case claimMaybe:
				shared = append(shared, id)
			}
		}
		if theirs {
			continue
		}
		slices.Sort(shared)
		c.Shared = shared
		out = append(out, c)
	}
	return out
}

type claim int

const (
	claimNone  claim = iota
	claimMaybe       // it may have made the change
	claimExact       // its file tool made it
)

// claims says whether p's session may have made c.
func (p *peer) claims(c Change) claim {
	best := claimNone
	for _, e := range p.entries {
		for _, o := range e.Changes {
			if o.Path != c.Path {
				continue
			}
			// A file tool's entry, or a command's whose writes the
			// sandbox saw: what it holds was that call's alone.
			if (e.Exact || e.Attributed) && o.After.same(c.After) && o.After.Blob == c.After.Blob {
				return claimExact
			}
			best = claimMaybe
		}
	}
	if m := p.running; m != nil {
		switch {
		case p.wroteKnown:
			if len(ownOf([]Change{c}, p.wrote)) > 0 || under(p.wrote, c.Path) { // its path, or a directory its writes needed
				best = claimMaybe
			}
		case len(m.Paths) == 0 || slices.Contains(m.Paths, c.Path) || under(m.Paths, c.Path):
			best = claimMaybe
		}
	}
	return best
}

// setRunning records m, the marker of a call of the session whose
// journal is journal, in flight (or killed in flight), with what its
// command was seen writing when its write journal says.
func (p *peer) setRunning(journal string, m *marker) {
	p.running = m
	if len(m.Paths) == 0 {
		p.wrote, p.wroteKnown = readWriteJournal(journal, *m)
	}
}

// under reports whether p is an ancestor directory of one of paths (a
// file tool creates the directories its path needs).
func under(paths []string, p string) bool {
	for _, q := range paths {
		if strings.HasPrefix(q, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// peerRecords reads each other session's marker and journal once for an
// undo, however many of its changes name that session.
type peerRecords struct {
	journal string
	got     map[string]*peerRecord
}

type peerRecord struct {
	marker  *marker // a call of its that has not ended
	entries []Entry
	damaged bool // its journal could not be read whole
}

func newPeerRecords(journal string) *peerRecords {
	return &peerRecords{journal: journal, got: map[string]*peerRecord{}}
}

func (r *peerRecords) of(id string) *peerRecord {
	if rec, ok := r.got[id]; ok {
		return rec
	}
	rec := &peerRecord{}
	var m marker
	if b, err := os.ReadFile(filepath.Join(runningDir(r.journal), id)); err == nil && json.Unmarshal(b, &m) == nil {
		rec.marker = &m
	}
	entries, err := readJournal(filepath.Join(filepath.Dir(r.journal), id+".jsonl"))
	rec.entries, rec.damaged = entries, err != nil && !os.IsNotExist(err)
	r.got[id] = rec
	return rec
}

// stillShared is, for undo, the sessions of c.Shared whose record, read
// now, still leaves open that they made c: a call of theirs that
// overlapped e changed the same path, or one that began before e ended
// has not ended (still running, or killed mid-call: what it changed is
// unknown). A session whose record shows neither did not make it.
func (r *peerRecords) stillShared(e Entry, c Change) []string {
	var out []string
	for _, id := range c.Shared {
		rec := r.of(id)
		if rec.damaged {
			out = append(out, id) // its record is damaged: it may hold the call
			continue
		}
		p := &peer{}
		// Live or not: a call that began before e ended and never ended
		// (its session was killed) changed what nobody knows.
		if rec.marker != nil && rec.marker.Start.Before(e.Time) {
			p.setRunning(filepath.Join(filepath.Dir(r.journal), id+".jsonl"), rec.marker)
		}
		for _, oe := range rec.entries {
			if oe.Tool != "undo" && !oe.Time.Before(e.Start) && (oe.Start.IsZero() || oe.Start.Before(e.Time)) {
				p.entries = append(p.entries, oe)
			}
		}
		if p.claims(c) != claimNone {
			out = append(out, id)
		}
	}
	return out
}
