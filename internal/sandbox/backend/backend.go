package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"
)

// ErrUnavailable is returned (wrapped) when the backend asked for cannot
// run on this machine; sandbox.ErrUnavailable is the same value.
var ErrUnavailable = errors.New("sandbox backend unavailable")

// ErrNoRunner, from Runner.Run, says the runner cannot run this command:
// the orchestration then runs it in a sandbox of its own.
var ErrNoRunner = errors.New("no launcher")

// Runner runs a session's commands through something long-lived: the
// launcher inside the outer walls (Linux), the session's container.
type Runner interface {
	// Run runs script in dir and returns its exit code (128+n when
	// killed by signal n) and a note for the model (a restarted launcher
	// or container). ctx ending kills the command; the caller reports
	// the timeout or interruption.
	Run(ctx context.Context, script, dir string, stdout, stderr io.Writer) (code int, note string, err error)
	// Close stops the runner, killing what still runs in it.
	Close()
}

// Container engine backend names.
const (
	Docker = "docker"
	Podman = "podman"
)

// Options is what the orchestration hands a mechanism it opens.
type Options struct {
	// Getenv is the caller's environment (the process's, or a test's);
	// nil reads nothing.
	Getenv func(string) string
	// Proxy, when set, is the commands' way out.
	Proxy *netproxy.Proxy
}

// Env reads k from the caller's environment.
func (o Options) Env(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// SessionPrefix names a session's private temporary directory and its
// cgroups, followed by the harness's pid and a unique part.
const SessionPrefix = "harness-session-"

// SelfExe is the harness executable's path, symlinks resolved: the
// helper a sandbox re-executes inside.
func SelfExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the harness executable for the sandbox helper: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}

// FirstLine is the first line of b, trimmed, for an error.
func FirstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// Exists reports whether p exists (a link counts, whatever it names).
func Exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// OutsideBase is a host directory outside /tmp (which bwrap replaces), so a
// probe there tests the walls rather than the private /tmp.
func OutsideBase() string {
	if st, err := os.Stat("/var/tmp"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/var/tmp", "harness-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/var/tmp"
		}
	}
	return os.TempDir()
}
