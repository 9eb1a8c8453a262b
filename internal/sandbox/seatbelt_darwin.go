package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

const sandboxExec = "/usr/bin/sandbox-exec"

func detect() (string, string) {
	if _, err := os.Stat(sandboxExec); err == nil {
		return BackendSeatbelt, "macOS Seatbelt (" + sandboxExec + ") is available"
	}
	return "", sandboxExec + " is missing"
}

func openBackend(name string, p *walls.Policy, tmp string, o openOptions) (Sandbox, error) {
	switch name {
	case BackendSeatbelt:
	case BackendBwrap, BackendLandlock:
		return nil, fmt.Errorf("%w: %s is Linux only; use seatbelt on macOS", ErrUnavailable, name)
	default:
		return nil, fmt.Errorf("unknown sandbox backend %q: use auto, bwrap, landlock, seatbelt or none", name)
	}
	// Only /usr/bin's: one earlier on PATH could be anything.
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, fmt.Errorf("%w: %s not found", ErrUnavailable, sandboxExec)
	}
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r // /tmp and /var are symlinks into /private
	}
	argv, env := seatbeltArgs(p, tmp)
	s := &instance{name: BackendSeatbelt, pol: p, tmp: tmp, tree: treeSession}
	var proxyLn io.Closer
	if o.proxy != nil {
		// The one way out (seatbeltproxy.go): argv[2] is the profile.
		ln, port, err := listenProxy(o.proxy)
		if err != nil {
			return nil, err
		}
		proxyLn, s.proxy = ln, o.proxy
		argv[2] += seatbeltProxyRule(port)
		env = append(env, netproxy.ProxyEnv(port)...)
	}
	if exe, err := os.Executable(); err == nil {
		s.helper = exe // the battery's probes re-execute harness inside
	}
	var mu sync.Mutex
	live := map[*kqTracker]bool{}
	s.track = func(pid int) func() {
		t := trackProcesses(pid)
		mu.Lock()
		live[t] = true
		mu.Unlock()
		return func() {
			t.kill()
			mu.Lock()
			delete(live, t)
			mu.Unlock()
		}
	}
	s.closed = func() {
		mu.Lock()
		ts := make([]*kqTracker, 0, len(live))
		for t := range live {
			ts = append(ts, t)
		}
		mu.Unlock()
		for _, t := range ts {
			t.killAll() // the command's own Run finishes the rest
		}
		if proxyLn != nil {
			proxyLn.Close()
		}
	}
	s.wrap = func(script, _ string) ([]string, []string, error) {
		return append(append([]string(nil), argv...), "/bin/sh", "-c", script), env, nil
	}
	return s, nil
}
