//go:build !linux

package sandbox

import "github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

// attachCgroup: there are no cgroups here (cgroup.Open returns nil).
func attachCgroup(s *instance, cg *cgroup.Session) { s.cg = cg }
