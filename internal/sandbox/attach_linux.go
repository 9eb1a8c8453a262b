package sandbox

import (
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"
)

// attachCgroup gives s (its read-only variant and launchers too) the
// session's cgroup cg, where one is writable.
func attachCgroup(s *instance, cg *cgroup.Session) {
	s.cg = cg
	if s.cg == nil {
		return
	}
	for _, i := range []*instance{s, s.ro} {
		if i == nil {
			continue
		}
		i.cg = s.cg
		if l, ok := i.launch.(*launcher); ok {
			l.cg = s.cg
		}
	}
}

// launcherState is r's state when r is a launcher (see Mechanisms).
func launcherState(r backend.Runner) func() (string, int) {
	l, ok := r.(*launcher)
	if !ok {
		return nil
	}
	return func() (string, int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.cur == nil {
			return "the launcher is gone", l.restarts
		}
		select {
		case <-l.cur.done:
			return "the launcher died", l.restarts
		default:
			return "", l.restarts
		}
	}
}
