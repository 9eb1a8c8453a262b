package sandbox

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/harness-dev/harness/internal/sandbox/container"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func detect() (string, string) {
	bw, err := exec.LookPath("bwrap")
	why := "bwrap not found in PATH"
	if err == nil {
		out, err := exec.Command(bw, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--unshare-net", "/bin/true").CombinedOutput()
		if err == nil {
			return BackendBwrap, fmt.Sprintf("bubblewrap at %s can create user, PID and network namespaces", bw)
		}
		why = fmt.Sprintf("bubblewrap at %s cannot create namespaces here (%s)", bw, firstLine(out))
	}
	if abi := inner.LandlockABI(); abi > 0 {
		return BackendLandlock, fmt.Sprintf("%s; Landlock ABI %d is available, so harness applies Landlock and seccomp itself", why, abi)
	}
	return "", why + ", and this kernel has no Landlock"
}

func openBackend(name string, p *walls.Live, tmp string, o openOptions) (Sandbox, error) {
	var s *instance
	var err error
	switch name {
	case BackendBwrap:
		s, err = openBwrap(p, tmp, o)
	case BackendLandlock:
		s, err = openLandlock(p, tmp, o)
	case BackendDocker, BackendPodman:
		s, err = openContainer(context.Background(), name, p, tmp, o)
	case BackendSeatbelt:
		return nil, fmt.Errorf("%w: seatbelt is macOS only; use bwrap or landlock on Linux", ErrUnavailable)
	default:
		return nil, fmt.Errorf("unknown sandbox backend %q: use auto, bwrap, landlock, docker, podman, seatbelt or none", name)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// openContainer runs the session in a container of the engine name: the
// container package's Runner runs every command.
func openContainer(ctx context.Context, name string, p *walls.Live, tmp string, o openOptions) (*instance, error) {
	r, gs, err := container.Open(ctx, name, p, tmp, o.backend())
	if err != nil {
		return nil, err
	}
	s := &instance{name: name, live: p, tmp: tmp, helper: container.Helper, git: gs, launch: r, proxy: o.proxy}
	s.wrap = func(string, string) ([]string, []string, error) {
		return nil, nil, fmt.Errorf("the %s backend runs every command in the session's container", name)
	}
	return s, nil
}
