package sandbox

import "github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

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
