package battery

import (
	"context"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
)

// cgroupProbe checks, live, that a command runs in a cgroup of its own
// with the session's limits written there, populated while it runs and
// removed after it: what doctor's "resource bounds in force" line claims.
func cgroupProbe(sb sandbox.Sandbox) probe {
	pr := probe{name: "each command in a cgroup of its own, limits set"}
	cg := sandbox.Inspect(sb).Cgroup
	if sandbox.IsContainer(sb.Backend()) {
		pr.skip = "the engine's cgroup for the container holds the session's limits (header above)"
		return pr
	}
	if cg == nil || (cg.PidsMechanism() == "" && cg.MemoryMechanism() == "") {
		pr.skip = "no pids or memory cgroup here: the rlimits bound each process (probe below)"
		return pr
	}
	pr.host = func(ctx context.Context) (string, string) {
		done := make(chan error, 1)
		go func() {
			_, err := sb.Run(ctx, sandbox.Cmd{Script: "echo in; sleep 1"})
			done <- err
		}()
		var seen []string
		for deadline := time.Now().Add(10 * time.Second); seen == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			seen = cg.LimitedChildren()
		}
		if err := <-done; err != nil {
			return err.Error(), ""
		}
		if seen == nil {
			return "no cgroup with the session's limits held the command while it ran", ""
		}
		if left := cg.PopulatedCommands(); len(left) > 0 {
			return "processes stayed in the command's cgroups after it: " + strings.Join(left, ", "), ""
		}
		return "", strings.Join(seen, "; ")
	}
	return pr
}
