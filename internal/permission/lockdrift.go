package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LockfilesInForce reports whether an allow rule of the @lockfiles
// preset is loaded, from any rule file or flag.
func (g *Gate) LockfilesInForce() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, r := range g.rules.net {
		if r.src == "@lockfiles" && r.verdict == Allow {
			return true
		}
	}
	return false
}

// LockfileDrift compares the hosts the @lockfiles preset allows now with
// those it allowed when harness last looked (recorded in stateFile, which
// lives with the sessions, out of the agent's reach), records the current
// ones, and returns the hosts added since. The lockfiles are the
// project's, which an agent (or a pull) can change between sessions: a
// host that was not there when the user enabled the preset is said, not
// silently trusted. first is set when nothing was recorded yet.
func LockfileDrift(project, stateFile string) (added []string, first bool, err error) {
	now := LockfileHosts(project)
	b, rerr := os.ReadFile(stateFile)
	switch {
	case errors.Is(rerr, fs.ErrNotExist):
		first = true
	case rerr != nil:
		return nil, false, rerr
	}
	known := map[string]bool{}
	for _, h := range strings.Fields(string(b)) {
		known[h] = true
	}
	for _, h := range now {
		if !known[h] {
			added = append(added, h)
		}
	}
	if len(added) > 0 || first || len(known) != len(now) {
		if err := os.MkdirAll(filepath.Dir(stateFile), 0o700); err != nil {
			return added, first, err
		}
		if err := os.WriteFile(stateFile, []byte(strings.Join(now, "\n")+"\n"), 0o600); err != nil {
			return added, first, err
		}
	}
	return added, first, nil
}
