package seatbelt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// SandboxExec is the macOS program that applies a profile. Only
// /usr/bin's: one earlier on PATH could be anything.
const SandboxExec = "/usr/bin/sandbox-exec"

// Available says why the seatbelt backend cannot run here, nil when it can.
func Available() error {
	if _, err := os.Stat(SandboxExec); err != nil {
		return fmt.Errorf("%w: %s not found", backend.ErrUnavailable, SandboxExec)
	}
	return nil
}

// Session is what the orchestration runs a seatbelt session's commands
// with: a sandbox of their own each (there is no launcher), behind the
// profile, followed by a kqueue tracker.
type Session struct {
	// Tmp is the session's private directory, symlinks resolved.
	Tmp string
	// Helper is the harness executable (the battery's probes re-execute
	// it inside), "" when unknown.
	Helper string
	argv   []string
	env    []string

	mu      sync.Mutex
	live    map[*kqTracker]bool
	proxyLn io.Closer
}

// Open builds the profile for p with the private directory tmp and, with
// px, the one way out to the network proxy on the host's loopback.
func Open(p *walls.Policy, tmp string, px *netproxy.Proxy) (*Session, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r // /tmp and /var are symlinks into /private
	}
	argv, env := seatbeltArgs(p, tmp)
	s := &Session{Tmp: tmp, argv: argv, env: env, live: map[*kqTracker]bool{}}
	if px != nil {
		// The one way out (proxy.go): argv[2] is the profile.
		ln, port, err := listenProxy(px)
		if err != nil {
			return nil, err
		}
		s.proxyLn = ln
		s.argv[2] += seatbeltProxyRule(port)
		s.env = append(s.env, netproxy.ProxyEnv(port)...)
	}
	if exe, err := os.Executable(); err == nil {
		s.Helper = exe
	}
	return s, nil
}

// Wrap is the argv and environment that run script behind the profile.
func (s *Session) Wrap(script, _ string) ([]string, []string, error) {
	return append(append([]string(nil), s.argv...), "/bin/sh", "-c", script), s.env, nil
}

// Track follows pid's processes from their start and returns what kills
// them all.
func (s *Session) Track(pid int) (killAll func()) {
	t := trackProcesses(pid)
	s.mu.Lock()
	s.live[t] = true
	s.mu.Unlock()
	return func() {
		t.kill()
		s.mu.Lock()
		delete(s.live, t)
		s.mu.Unlock()
	}
}

// Close kills what every tracker still follows (each command's own Run
// finishes the rest) and stops the proxy's listener.
func (s *Session) Close() {
	s.mu.Lock()
	ts := make([]*kqTracker, 0, len(s.live))
	for t := range s.live {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	for _, t := range ts {
		t.killAll()
	}
	if s.proxyLn != nil {
		s.proxyLn.Close()
	}
}
