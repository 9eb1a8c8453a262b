//go:build !linux

package sandbox

import (
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"
)

// attachCgroup: there are no cgroups here (cgroup.Open returns nil).
func attachCgroup(s *instance, cg *cgroup.Session) { s.cg = cg }

// launcherState: there is no launcher here.
func launcherState(backend.Runner) func() (string, int) { return nil }
