package checkpoint

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// The tree as the session last saw it is kept beside the journal
// (<session>.state): the whole manifest at a process's first call, then
// what each scan found changed, one line each, appended before the call
// runs and after it ends. A call harness is killed in never reaches its
// end, so its change is recorded after the fact (killed.go); with this
// file that record starts from the tree as it stood when the call began,
// the paths the journal never saw (a file the call created) included,
// instead of from the journal's last word on each path.
//
// The file holds states and content hashes, never content (the blobs
// keep that), and lives with the journal where no command can write it.

// savedState is a State with the scan's own fields, so a recovery's scan
// hashes again only what changed since.
type savedState struct {
	State
	Mtime  int64  `json:"mt,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Recent bool   `json:"recent,omitempty"`
}

// stateLine is one line of the state file: a whole manifest (the first)
// or what changed since the line before.
type stateLine struct {
	Roots []string              `json:"roots,omitempty"` // with a whole manifest: the roots it covers
	Base  map[string]savedState `json:"base,omitempty"`
	Set   map[string]savedState `json:"set,omitempty"`
	Del   []string              `json:"del,omitempty"`
}

func statePath(journal string) string { return strings.TrimSuffix(journal, ".jsonl") + ".state" }

func save(st State) savedState {
	return savedState{State: st, Mtime: st.mtime, Ino: st.ino, Recent: st.recent}
}

func (ss savedState) state() State {
	st := ss.State
	st.mtime, st.ino, st.recent = ss.Mtime, ss.Ino, ss.Recent
	return st
}

// saveState records man, the tree before or after a call: whole the
// first time in this process (the file is started again), else what
// changed since the tree the file holds. A failure is noted once: a call
// harness is killed in is then recorded from the journal alone.
func (s *Store) saveState(man map[string]State) {
	prev := s.saved
	var line stateLine
	if prev == nil {
		line.Roots = s.roots
		line.Base = make(map[string]savedState, len(man))
		for p, st := range man {
			line.Base[p] = save(st)
		}
	} else {
		for p, st := range man {
			if old, ok := prev[p]; !ok || save(old) != save(st) {
				if line.Set == nil {
					line.Set = map[string]savedState{}
				}
				line.Set[p] = save(st)
			}
		}
		for p := range prev {
			if _, ok := man[p]; !ok {
				line.Del = append(line.Del, p)
			}
		}
		if line.Set == nil && line.Del == nil {
			return
		}
	}
	b, err := json.Marshal(line)
	if err == nil {
		b = append(b, '\n')
		if line.Base != nil {
			err = replaceFile(statePath(s.dir), b)
		} else {
			err = appendFile(statePath(s.dir), b)
		}
	}
	if err != nil {
		s.saved = nil // start whole again next time
		s.note("checkpoints: could not save the tree's state (" + err.Error() + "); a call harness is killed in will be recorded only in part")
		return
	}
	s.saved = man
}

func replaceFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errNoState: the session saved no state (no call yet in the process
// that was killed, or a harness from before the file existed).
var errNoState = errors.New("no saved state")

// loadState is the tree as the state file last saw it, and the roots it
// covers. A torn last line (a kill mid-append) is left out: the line
// before it still stands.
func loadState(journal string) (man map[string]State, roots []string, err error) {
	f, err := os.Open(statePath(journal))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, errNoState
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			var line stateLine
			if jerr := json.Unmarshal(b, &line); jerr != nil {
				return nil, nil, fmt.Errorf("%s line %d: %w", statePath(journal), n, jerr)
			}
			if line.Base != nil {
				roots = line.Roots
				man = make(map[string]State, len(line.Base))
				for p, ss := range line.Base {
					man[p] = ss.state()
				}
			} else if man == nil {
				return nil, nil, fmt.Errorf("%s line %d: changes before any whole state", statePath(journal), n)
			}
			for p, ss := range line.Set {
				man[p] = ss.state()
			}
			for _, p := range line.Del {
				delete(man, p)
			}
		}
		if err != nil {
			break // EOF, or a torn last line
		}
	}
	if man == nil || len(roots) == 0 {
		return nil, nil, errNoState
	}
	return man, roots, nil
}

// Heartbeat: while a call is in flight the marker's time is renewed, so
// once its process is gone the marker says when it last lived: a killed
// call's change is what changed between its start and then, and another
// session knows whether the dead call overlapped its own.
const beat = 250 * time.Millisecond

// startBeat renews the marker's time until stop is closed.
func startBeat(path string, stop <-chan struct{}) {
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				os.Chtimes(path, now, now)
			}
		}
	}()
}

// lastAlive is when the process behind the marker at path was last known
// alive (its last heartbeat), with a beat of slack.
func lastAlive(path string) (time.Time, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime().Add(2 * beat), true
}
