package sandbox

import (
	"fmt"

	"github.com/harness-dev/harness/internal/sandbox/seatbelt"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

func detect() (string, string) {
	if seatbelt.Available() == nil {
		return BackendSeatbelt, "macOS Seatbelt (" + seatbelt.SandboxExec + ") is available"
	}
	return "", seatbelt.SandboxExec + " is missing"
}

func openBackend(name string, p *walls.Live, tmp string, o openOptions) (Sandbox, error) {
	switch name {
	case BackendSeatbelt:
	case BackendBwrap, BackendLandlock:
		return nil, fmt.Errorf("%w: %s is Linux only; use seatbelt on macOS", ErrUnavailable, name)
	default:
		return nil, fmt.Errorf("unknown sandbox backend %q: use auto, bwrap, landlock, seatbelt or none", name)
	}
	sb, err := seatbelt.Open(p.Policy(), tmp, o.proxy)
	if err != nil {
		return nil, err
	}
	s := &instance{name: BackendSeatbelt, live: p, tmp: sb.Tmp, tree: treeSession, helper: sb.Helper,
		wrap: sb.Wrap, track: sb.Track, closed: sb.Close}
	if o.proxy != nil {
		s.proxy = o.proxy
	}
	return s, nil
}
