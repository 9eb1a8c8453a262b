package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Cmd is one shell command to run.
type Cmd struct {
	// Script is passed to /bin/sh -c.
	Script string
	// Dir is the working directory; empty means the project root.
	Dir string
	// Timeout overrides the policy's timeout when non-zero.
	Timeout time.Duration
	// ReadOnly runs the command under the read-only variant of the walls:
	// the project and every --add-dir root read-only, the private /tmp
	// (shared with the session's other commands) writable. Backends that
	// have none (CanReadOnly false) refuse it with ErrNoReadOnly.
	ReadOnly bool
	// Stdout and Stderr, when set, receive the command's output as it comes
	// (used by `harness sandbox`); Result.Output is then empty. When nil,
	// both streams go, interleaved, to the bounded Result.Output.
	Stdout, Stderr io.Writer
	// Progress, when set, also receives both streams as they come, for a
	// live view; it must be safe for concurrent writes.
	Progress io.Writer
	// Stdin, when set, is the command's standard input instead of
	// /dev/null (an *os.File, such as a pipe's end, is passed as is). Such
	// a command, a long-lived server speaking over its pipes (MCP), runs in
	// a sandbox of its own rather than through the launcher, behind the
	// same walls; container backends refuse it.
	Stdin io.Reader
	// NoNet: the command reaches no network at all, whatever the net
	// rules allow (a language server): it runs in a sandbox of its own
	// whose every connection the proxy refuses.
	NoNet bool
	// WriteJournal, when set, gets the paths the command asks to write as
	// the sandbox sees them, a JSON string a line ("null": unknown from
	// there on), where the sandbox tracks writes (the launcher): the
	// caller's record of a command it may not see end (package checkpoint).
	WriteJournal *os.File
	// Label names the command where a person reads it (a network
	// question it raises) when Script is harness's own wrapper around
	// the user's words (an MCP server's definition); "" is Script.
	Label string
}

// Result is what a command did.
type Result struct {
	Output    []byte // stdout and stderr interleaved in order, bounded by Policy.OutputLimit
	Truncated int    // bytes dropped by the bound
	ExitCode  int    // 124 on timeout
	TimedOut  bool
	Duration  time.Duration
	// Tampered lists protected paths (hooks, git config, carve-outs) that
	// changed during the command. Non-empty means the walls did not hold or
	// the backend cannot hold them; the caller reports it loudly.
	Tampered []string
	// GitMoves are branch heads the command moved off their history or
	// deleted, each with the commit to return to (also said in Output).
	GitMoves []gitshadow.RefMove
	// Found lists repositories, gitdir pointers and hooks paths that
	// appeared during the command: protected (read-only) from the next
	// command on; the caller reports each to the user.
	Found []walls.Finding
	// Wrote, when WroteKnown, are the paths beneath the policy's writable
	// roots (Policy.Writable, as named there) that the command's
	// processes, background ones included, asked to create, write,
	// rename, remove, link or chmod, as the sandbox itself saw them
	// (linux/inner/wrote_linux.go): a change found elsewhere in the
	// command's window is not the command's. Without WroteKnown,
	// WroteWhy says why the set is unknown (a backend or kernel that
	// cannot tell, a command past the bound); every change in the
	// window may then be the command's. Attribution, not a wall: a
	// command that means to hide a write can.
	Wrote      []string
	WroteKnown bool
	WroteWhy   string
}

// Sandbox is one session's sandbox.
type Sandbox interface {
	// Run executes cmd. An error means the command could not be started;
	// a command that ran and failed is a Result with a non-zero ExitCode.
	Run(ctx context.Context, cmd Cmd) (*Result, error)
	// Backend names the backend in force: bwrap, landlock, seatbelt or none.
	Backend() string
	// Policy is the snapshot of the rules this sandbox enforces now.
	Policy() *walls.Policy
	// Live holds the session's rules as they change: the sandbox refreshes
	// it after every command and names its private /tmp in it.
	Live() *walls.Live
	// Close stops the session's launcher, if any (killing what still runs
	// inside), and removes the session's private temporary directory.
	Close() error
}

// Backend names accepted by Open.
const (
	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
	BackendNone     = "none"
)

// TimeoutExit is the exit code of a command killed by its timeout.
const TimeoutExit = 124

// ErrUnavailable is returned (wrapped) by Open when the backend asked for
// cannot run on this machine.
var ErrUnavailable = backend.ErrUnavailable

// Detect names the best backend available here and says why.
func Detect() (name, reason string) { return detect() }

// Option adjusts Open.
type Option func(*openOptions)

type openOptions struct {
	perCommand bool
	proxy      *netproxy.Proxy
	// cg is the session's cgroups, opened before the backend so its
	// rlimits can defer to them (nprocRlimit); nil without any.
	cg     *cgroup.Session
	getenv func(string) string // the caller's environment; nil reads nothing
}

// backend is what a mechanism package is given.
func (o openOptions) backend() backend.Options {
	return backend.Options{Getenv: o.getenv, Proxy: o.proxy}
}

// WithProxy gives commands a way out through px (see Proxy): inside the
// sandbox's network namespace the launcher, or a sandbox's own inner
// stage when each command has one, listens on ProxyPort, and
// HTTPS_PROXY, HTTP_PROXY, ALL_PROXY (and their lower-case forms) point
// there. The bwrap and landlock backends offer it (the landlock one only
// with user namespaces, for a network namespace of its own), seatbelt on
// macOS too; elsewhere commands stay without a network (Limits says so).
func WithProxy(px *netproxy.Proxy) Option {
	return func(o *openOptions) { o.proxy = px }
}

// OffersProxy reports whether sb's commands reach the proxy given to
// WithProxy (see there for where they do not).
func OffersProxy(sb Sandbox) bool {
	s, ok := sb.(*instance)
	return ok && s.proxy != nil
}

// OwnLoopback reports whether sb's commands have a loopback of their own
// (a network namespace), so that what listens on their localhost is theirs
// and never a host service: bwrap, landlock with a network namespace, and
// the containers. seatbelt and none share the host's.
func OwnLoopback(sb Sandbox) bool {
	switch sb.Backend() {
	case BackendBwrap, BackendDocker, BackendPodman:
		return true
	case BackendLandlock:
		return OffersProxy(sb) // the proxy needs the namespace
	}
	return false
}

// LauncherEnv, set to 0 in the environment, turns the launcher off (see
// LauncherFromEnv).
const LauncherEnv = "HARNESS_SANDBOX_LAUNCHER"

// LauncherFromEnv is WithLauncher as the environment getenv reads asks:
// off when LauncherEnv is 0. The caller passes the environment in (the
// process's, or a test's); the sandbox reads none itself.
func LauncherFromEnv(getenv func(string) string) Option {
	return WithLauncher(getenv(LauncherEnv) != "0")
}

// WithEnv gives the backends the environment the caller read (the
// process's, or a test's): LauncherEnv as LauncherFromEnv reads it,
// ImageEnv for the container image, and DOCKER_HOST and XDG_RUNTIME_DIR
// to find podman's socket. Without it the sandbox reads none of them
// (the engine's client, engine.New, still takes its own DOCKER_*
// settings, as every Docker client does).
func WithEnv(getenv func(string) string) Option {
	launcher := LauncherFromEnv(getenv)
	return func(o *openOptions) {
		o.getenv = getenv
		launcher(o)
	}
}

// WithLauncher chooses how the bwrap and landlock backends start commands:
// true (the default) puts up the outer walls once per session around a
// launcher that starts each command, behind the same inner walls, in its
// own killable process tree; false puts up a fresh sandbox for every
// command (slower; the fallback, and the baseline the benchmark compares).
func WithLauncher(on bool) Option {
	return func(o *openOptions) { o.perCommand = !on }
}

// Open starts a session's sandbox for the rules live holds, with the named
// backend ("auto" picks the best available). It creates the session's
// private temporary directory and runs a self-check (selfcheck.go): a write
// inside must succeed and a write outside the project must fail with a
// denial, or Open refuses the backend with a *SelfCheckError. Every command
// reads the current snapshot of live; the sandbox refreshes live after each
// and names its private /tmp there (Live.SetTempDir).
func Open(ctx context.Context, live *walls.Live, backend string, opts ...Option) (Sandbox, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if live == nil {
		return nil, errors.New("sandbox.Open: nil policy")
	}
	p := live.Policy()
	if backend == "" || backend == BackendAuto {
		name, reason := detect()
		if name == "" {
			install := "install bubblewrap, or "
			if runtime.GOOS != "linux" {
				install = ""
			}
			return nil, fmt.Errorf("%w: %s; %spass --sandbox none to run without walls (every command then needs approval)", ErrUnavailable, reason, install)
		}
		backend = name
	}
	if backend == BackendNone {
		return &None{L: live}, nil
	}
	removeStale()
	// The harness's pid in the name says whose it is (see removeStale).
	tmp, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", sessionPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("creating the session's private temporary directory: %w", err)
	}
	if !IsContainer(backend) {
		o.cg = cgroup.Open(p.MaxProcs(), p.MaxMemory()) // the engine's cgroup holds a container's limits
	}
	sb, err := openBackend(backend, live, tmp, o)
	if err != nil {
		o.cg.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	if s, ok := sb.(*instance); ok && o.perCommand && (s.name == BackendBwrap || s.name == BackendLandlock) {
		s.launch = nil
		if s.ro != nil {
			s.ro.launch = nil
		}
	}
	if s, ok := sb.(*instance); ok {
		attachCgroup(s, o.cg)
		if s.tmpIsPrivate() {
			// The gate looks through it for links earlier commands planted
			// (permission.privateTmp, repoProtected).
			live.SetTempDir(s.tmp)
		}
	}
	if err := selfCheck(ctx, sb); err != nil {
		sb.Close()
		return nil, err
	}
	return sb, nil
}

// outsideBase is a host directory outside /tmp (backend.OutsideBase).
func outsideBase() string { return backend.OutsideBase() }

// shellQuote quotes s for /bin/sh.
