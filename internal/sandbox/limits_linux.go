package sandbox

import (
	"fmt"

	"github.com/harness-dev/harness/internal/sandbox/container"
	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Limits says, plainly, which rules backend, opened with opts, cannot
// hold on this machine.
func Limits(backend string, opts ...Option) []string {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	switch backend {
	case BackendBwrap:
		var l []string
		if inner.LandlockABI() == 0 {
			l = append(l, "this kernel has no Landlock: the inner stage adds seccomp only (bwrap's read-only mounts still hold every write rule)")
			if !o.perCommand {
				l = append(l, "with the launcher, a command may ptrace a supervisor in the moment between its start and PR_SET_DUMPABLE 0; it gains no wall it did not have (HARNESS_SANDBOX_LAUNCHER=0 gives each command a sandbox of its own)")
			}
		}
		if inner.LandlockABI() < 6 {
			l = append(l, "Landlock below ABI 6: a command can kill the session's launcher or a command running beside it (a denial of service; the next command restarts the launcher)")
		}
		return l
	case BackendLandlock:
		var l []string
		if !userNamespaces() {
			l = append(l, "no user namespaces, so no network namespace: socket() is denied for every address family (socketpair still works) and the network proxy is not offered: Landlock's network rules name a port, not an address, so a grant to reach the proxy's port on the host's loopback would reach that port on any host")
		}
		if !userNamespaces() || !inner.MountSetattrWorks() {
			l = append(l, "no read-only mount view of / (no user namespaces, or no mount_setattr): chmod, chown, utime and extended-attribute changes, which Landlock does not mediate, are denied by seccomp everywhere, inside the project too (chmod +x, touch of an existing file and cp -p fail there)")
		}
		if inner.LandlockABI() < 6 {
			l = append(l, "Landlock below ABI 6: signals to processes outside the sandbox are not scoped, so a command can kill the session's launcher or a command running beside it (a denial of service; the next command restarts the launcher)")
		}
		if !userNamespaces() {
			l = append(l,
				".git, .agents and hooks inside the project cannot be carved out of a Landlock grant without a mount namespace: changes are detected after each command, not prevented",
				"secrets under $HOME stay readable: Landlock here restricts writes only",
				"/tmp is not private: TMPDIR points at the session's own directory instead",
				"no PID namespace: a process that calls setsid can outlive a timeout"+setsidHold())
		}
		return l
	case BackendDocker, BackendPodman:
		return container.Limits(backend)
	case BackendNone:
		return []string{"nothing is walled: every command runs directly on this machine"}
	}
	return nil
}

// MetadataWall says what holds chmod, chown, utime and xattr changes
// outside the writable roots under backend (Landlock does not mediate
// them), for doctor.
func MetadataWall(backend string) string {
	switch backend {
	case BackendBwrap:
		return "read-only bind of / (EROFS outside the writable roots)"
	case BackendLandlock:
		if userNamespaces() && inner.MountSetattrWorks() {
			return "read-only view of / in the sandbox's mount namespace (EROFS outside the writable roots)"
		}
		return "seccomp denies every form (EPERM), inside the project too: there is no mount namespace to hold / read-only"
	case BackendNone:
		return "nothing"
	}
	return ""
}

// setsidHold says whether a cgroup catches what leaves the process group.
func setsidHold() string {
	if cgroup.Writable() {
		return " (here a cgroup v2 holds each command and cgroup.kill ends it)"
	}
	return " (no writable cgroup v2 here to hold it)"
}

// limitsText says the resource limits in force under cg (nil: no cgroup)
// and what holds each, for doctor; launcher says commands run through the
// session's launcher.
func limitsText(cg *cgroup.Session, p *walls.Policy, backend string, launcher bool) string {
	if IsContainer(backend) {
		pids, mem := container.Bounds(p)
		return fmt.Sprintf("resource bounds in force: the container's own cgroup (set by the engine) holds %d processes and %d MiB for the whole session, and RLIMIT_NPROC %d and RLIMIT_DATA %d MiB per process inside", pids, mem>>20, p.MaxProcs(), p.MaxMemory()>>20)
	}
	return cg.LimitsText(p, launcher)
}

// BoundsText says the resource limits in force in sb and what holds
// each, for doctor.
func BoundsText(sb Sandbox) string {
	m := Inspect(sb)
	return limitsText(m.Cgroup, sb.Policy(), sb.Backend(), m.Launcher != nil)
}
