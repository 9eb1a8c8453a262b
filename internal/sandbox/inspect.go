package sandbox

import (
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"
)

// Mechanisms are an open sandbox's moving parts, for what checks them
// from the host: the escape battery, the mechanisms' own tests.
type Mechanisms struct {
	// Backend names the backend in force.
	Backend string
	// Helper is the harness binary's path as seen inside ("" for none).
	Helper string
	// Runner runs the session's commands (the launcher, the session's
	// container); nil when each command gets a sandbox of its own.
	Runner backend.Runner
	// Launcher, with the session's launcher (Linux), says whether it is
	// down (a problem) and how many times it was restarted; nil without.
	Launcher func() (problem string, restarts int)
	// Cgroup is the session's cgroups, nil without any.
	Cgroup *cgroup.Session
}

// Inspect returns sb's mechanisms (only the Backend of a sandbox this
// package did not open, or of none).
func Inspect(sb Sandbox) Mechanisms {
	s, ok := sb.(*instance)
	if !ok {
		return Mechanisms{Backend: sb.Backend()}
	}
	return Mechanisms{Backend: s.name, Helper: s.helper, Runner: s.launch, Launcher: launcherState(s.launch), Cgroup: s.cg}
}
