package battery

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/testenv"
)

var batteryVariants = []string{sandbox.BackendBwrap, sandbox.BackendBwrap + perCommand, sandbox.BackendLandlock, sandbox.BackendLandlock + perCommand}

// classProbes are the battery's probes for the nine classes of
// escape (doc.go's threats), each of which must run and hold, as root
// and as nobody: a skip here is a failure.
var classProbes = []string{
	"file tools: read vs a symlink flipper",                    // 1
	"file tools: write vs a symlink flipper",                   // 1
	"file tools: devices, FIFOs, huge files",                   // 1
	"kill a leader that ended its main thread",                 // 2
	"git of the agent's making never runs on the host",         // 3, 4
	"git history: objects a command writes outlive it",         // #41
	"git history: refs/replace from inside",                    // #41
	"file tools and loaders refuse secrets, by link too",       // 5
	"chmod, utime, xattr outside the project",                  // 6
	"secrets unreadable (~/.ssh, ~/.agents/env, other tools')", // 7
	"other sessions' spill files hidden, this one's kept",      // 7
	"environment holds no API key",                             // 7
	"resource bounds in force inside",                          // 8
	"sub-agents' bash (read-only walls) writes nothing",        // 9
	"plan mode stops a writer already running",                 // issue 41: a mode is a state of the whole session
}

// requireClasses fails t unless every class probe held in the battery's
// output, and with cgroups (the battery ran where the host offers its uid
// pids and memory controllers) the cgroup probe.
func requireClasses(t *testing.T, out string, cgroups bool) {
	t.Helper()
	for _, name := range classProbes {
		if !strings.Contains(out, "\nheld     "+name) {
			t.Errorf("the class probe %q did not run and hold", name)
		}
	}
	if cgroups && !strings.Contains(out, "\nheld     each command in a cgroup of its own, limits set") {
		t.Error("on a host that offers the battery's uid pids and memory controllers, the cgroup probe did not run and hold")
	}
}

func TestBattery(t *testing.T) {
	testenv.Slow(t)
	for _, variant := range batteryVariants {
		t.Run(variant, func(t *testing.T) {
			backend, opts := testVariant(variant)
			requireBackend(t, backend)
			t.Parallel()
			var out bytes.Buffer
			n, err := Run(context.Background(), backend, &out, opts...)
			t.Logf("uid %d:\n%s", os.Getuid(), out.String())
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d probes escaped the %s sandbox", n, backend)
			}
			requireClasses(t, out.String(), cgroup.HostOffersLimits())
			if c := strings.Count(out.String(), "\nheld "); c < 20 {
				t.Errorf("only %d probes held; the battery did not run in full", c)
			}
			if launched := strings.Contains(out.String(), "one launcher per session"); launched != !strings.HasSuffix(variant, perCommand) {
				t.Errorf("the battery ran with the launcher %v, want %v", launched, !launched)
			}
		})
	}
}

// TestBatteryUnprivileged re-runs the battery as nobody (uid 65534): the
// walls must not depend on the harness running as root.
func TestBatteryUnprivileged(t *testing.T) {
	testenv.Slow(t)
	setpriv, bin := testenv.NobodyBinary(t, backend.OutsideBase(), "TestBattery")
	for _, variant := range batteryVariants {
		t.Run(variant, func(t *testing.T) {
			backend, _ := testVariant(variant)
			requireBackend(t, backend)
			t.Parallel()
			out, err := testenv.AsNobody(setpriv, bin, nil, batteryEnv+"="+variant).CombinedOutput()
			t.Logf("as nobody:\n%s", out)
			if err != nil {
				t.Errorf("the battery as nobody failed: %v", err)
			}
			if !bytes.Contains(out, []byte("held     write inside the project")) {
				t.Errorf("the battery as nobody did not run its probes")
			}
			requireClasses(t, string(out), false)
		})
	}
}

// requireBackend skips a test of backend where it cannot run, or fails
// it when HARNESS_REQUIRE names what is missing (CI does).
func requireBackend(t *testing.T, backend string) {
	t.Helper()
	switch backend {
	case sandbox.BackendBwrap:
		if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
			testenv.Missing(t, testenv.Bwrap, why+" (apt-get install bubblewrap; user namespaces must be allowed)")
		}
	case sandbox.BackendLandlock:
		if inner.LandlockABI() == 0 {
			testenv.Missing(t, testenv.Landlock, "this kernel has no Landlock")
		}
	}
}
