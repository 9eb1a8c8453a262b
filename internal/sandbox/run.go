package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// instance is one open sandbox, the shared implementation of every backend: a backend only
// says how to wrap a script (argv and environment); running, bounding,
// killing and the tamper check are the same for all, so the overhead
// benchmark compares like with like.
type instance struct {
	name string
	live *walls.Live // the session's rules; each command reads one snapshot
	tmp  string      // host path of the private temporary directory ("" for none)
	// wrap returns the argv (argv[0] is a path) and environment for script.
	wrap func(script, dir string) (argv, env []string, err error)
	// tree selects how the process tree is isolated (see proc_*.go).
	tree treeMode
	// helper is the harness executable's path as seen inside (probes use it).
	helper string
	// proxy, when set, is the commands' way out (proxy.go).
	proxy *netproxy.Proxy
	// git, when set, lets commands write the project's git data (gitwrite.go).
	git *gitshadow.Session
	// track, when set, follows every process a command starts from the
	// moment it starts (macOS: kqueue, seatbelt/track_darwin.go) and returns what
	// kills them all; runOwn calls it on exit, timeout and cancel.
	track func(pid int) (killAll func())
	// closed, when set, is called by Close (kills what is still tracked).
	closed func()
	// own, when set, readies each sandbox of its own before it starts (the
	// proxy's channel and a network namespace, proxy_linux.go) and
	// returns what ends that once the command is over.
	own func(cmd *exec.Cmd, noNet bool) (stop func(), err error)
	// launch, when set, runs commands through the session's long-lived
	// launcher instead of a fresh sandbox each (Linux; see launcher_linux.go).
	launch backend.Runner
	// cg, when set, is the session's cgroup (linux/cgroup): each
	// command run here starts in a child of it, killed whole at its end.
	cg *cgroup.Session
	// ro, when set, is the read-only variant that runs Cmd.ReadOnly
	// commands: same walls, the writable roots read-only. It shares tmp.
	ro *instance
}

func (s *instance) Backend() string       { return s.name }
func (s *instance) Policy() *walls.Policy { return s.live.Policy() }
func (s *instance) Live() *walls.Live     { return s.live }

func (s *instance) Close() error {
	if s.closed != nil {
		s.closed()
	}
	if s.launch != nil {
		s.launch.Close()
	}
	if s.ro != nil && s.ro.launch != nil {
		s.ro.launch.Close()
	}
	s.cg.Close()
	s.git.Close()
	if s.tmp == "" {
		return nil
	}
	err := os.RemoveAll(s.tmp)
	s.tmp = ""
	return err
}

// timeoutMessage tells the model what happened and what to do next.
func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("\n[harness: command timed out after %s; it and every process it started were killed (exit %d). Narrow the command: smaller input, an explicit limit, or no long-running servers in the foreground.]\n", d, TimeoutExit)
}

func (s *instance) Run(ctx context.Context, c Cmd) (*Result, error) {
	if s.live.Policy().ProjectReadOnly() && !c.ReadOnly { // plan mode (walls/planmode.go)
		if s.ro == nil {
			return nil, fmt.Errorf("%w: the %s backend has no read-only variant, so no command runs in plan mode", ErrNoReadOnly, s.name)
		}
		return s.ro.run(ctx, c)
	}
	return s.run(ctx, c)
}

func (s *instance) run(ctx context.Context, c Cmd) (*Result, error) {
	if c.ReadOnly {
		if s.ro == nil {
			return nil, fmt.Errorf("%w: the %s backend has no read-only variant", ErrNoReadOnly, s.name)
		}
		c.ReadOnly = false
		return s.ro.run(ctx, c)
	}
	if c.Stdin != nil && IsContainer(s.name) {
		return nil, fmt.Errorf("the %s backend cannot give a command a standard input; use bwrap, landlock or seatbelt", s.name)
	}
	pol := s.live.Policy()
	timeout := firstPositive(c.Timeout, pol.Timeout(), walls.DefaultTimeout)
	dir := cmp.Or(c.Dir, pol.Project())
	buf, stdout, stderr := s.outputs(c)
	before := walls.Snapshot(pol.Protected())
	gitBefore := s.git.Before()
	netMark := s.proxy.Mark()
	defer s.proxy.Started(cmp.Or(c.Label, c.Script))()

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	code, wrote, err := s.execute(runCtx, c, dir, stdout, stderr)
	if err != nil {
		return nil, err
	}
	r := &Result{Duration: time.Since(start), ExitCode: code, Wrote: wrote.Paths, WroteKnown: wrote.Known, WroteWhy: wrote.Why}
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		r.TimedOut, r.ExitCode = true, TimeoutExit
		io.WriteString(stderr, timeoutMessage(timeout))
	case ctx.Err() != nil:
		r.ExitCode = 130
		io.WriteString(stderr, "\n[harness: command interrupted]\n")
	}
	moves, notes := s.git.After(ctx, gitBefore)
	r.GitMoves = moves
	s.finish(r, c, buf, notes, netMark, stderr)
	// After: what is protected now, a parallel Refresh's adoptions included.
	r.Tampered = s.git.FilterTampered(walls.Changed(before, walls.Snapshot(s.live.Policy().Protected())))
	r.Found = s.live.Refresh()
	return r, nil
}

// firstPositive is the first of vs above zero (the last when none is).
func firstPositive[T int | time.Duration](vs ...T) T {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return vs[len(vs)-1]
}

// outputs are where a command's output goes: the bounded buffer the
// Result holds, or the caller's writers, each also to Progress.
func (s *instance) outputs(c Cmd) (buf *walls.BoundedBuffer, stdout, stderr io.Writer) {
	buf = &walls.BoundedBuffer{Limit: firstPositive(s.live.Policy().OutputLimit(), 1<<20)}
	stdout, stderr = buf, buf
	if c.Stdout != nil || c.Stderr != nil {
		stdout, stderr = orDiscard(c.Stdout), orDiscard(c.Stderr)
	}
	if c.Progress != nil {
		stdout, stderr = io.MultiWriter(stdout, c.Progress), io.MultiWriter(stderr, c.Progress)
	}
	return buf, stdout, stderr
}

// execute runs the command through the session's launcher, or, where it
// has none or cannot serve the command (standard input, no network), in
// a sandbox of its own, and says what it wrote where that is known.
func (s *instance) execute(ctx context.Context, c Cmd, dir string, stdout, stderr io.Writer) (int, inner.Writes, error) {
	code, err := 0, errNoLauncher
	wrote := wroteUnknown("the " + s.name + " backend cannot tell what a command wrote")
	if s.launch != nil && c.Stdin == nil && !c.NoNet {
		var note string
		if wr, ok := s.launch.(writesRunner); ok {
			track := trackRoots(s.live.Policy().Writable())
			code, note, wrote, err = wr.RunWrites(ctx, c.Script, dir, track.inside, c.WriteJournal, stdout, stderr)
			wrote.Paths = track.host(wrote.Paths)
		} else {
			code, note, err = s.launch.Run(ctx, c.Script, dir, stdout, stderr)
		}
		if note != "" {
			io.WriteString(stderr, note)
		}
	}
	if errors.Is(err, errNoLauncher) {
		wrote = wroteUnknown("the command ran in a sandbox of its own, which does not tell what it wrote")
		code, err = s.runOwn(ctx, c.Script, dir, c.Stdin, c.NoNet, stdout, stderr)
	}
	return code, wrote, err
}

// finish adds what the user must see after the command's output, past
// the output bound so it is never cut off: git's notes and moved refs,
// refused connections, the loopback and process-limit notes.
func (s *instance) finish(r *Result, c Cmd, buf *walls.BoundedBuffer, gitNotes []string, netMark int, stderr io.Writer) {
	var gitNote strings.Builder
	for _, n := range gitNotes {
		gitNote.WriteString("\n[harness: git: " + n + "]\n")
	}
	for _, m := range r.GitMoves {
		gitNote.WriteString("\n[harness: git: " + m.String() + "]\n")
	}
	if s.name != BackendNone {
		out, _ := buf.Result()
		gitNote.WriteString(s.proxy.LoopbackNote(out))
	}
	for _, rec := range s.proxy.Since(netMark) {
		if rec.Verdict != "allowed" {
			gitNote.WriteString("\n[harness: network: " + rec.String() + "]\n")
		}
	}
	// Whatever the exit code: a shell that could not fork may still exit 0.
	if s.name != BackendNone && c.Stdout == nil && c.Stderr == nil {
		if out, _ := buf.Result(); len(out) > 0 {
			io.WriteString(stderr, s.live.Policy().LimitNote(out))
		}
	}
	r.Output, r.Truncated = buf.Result()
	if gitNote.Len() > 0 {
		if c.Stdout != nil || c.Stderr != nil {
			io.WriteString(stderr, gitNote.String())
		} else {
			r.Output = append(r.Output, gitNote.String()...)
		}
	}
}

// startGate begins a tracked command's script: the shell reads one line
// from descriptor 3, written once the tracker follows it, then closes it
// so nothing the command starts inherits it. A gate closed unopened (the
// tracker failed) runs nothing.
const startGate = "read -r _ <&3 || exit 125; exec 3<&-\n"

// errNoLauncher says a command must run in a sandbox of its own.
var errNoLauncher = backend.ErrNoRunner

// runOwn runs one command in a sandbox of its own (the backend's wrap) and
// returns its exit code, 128+n when killed by signal n.
func (s *instance) runOwn(runCtx context.Context, script, dir string, stdin io.Reader, noNet bool, stdout, stderr io.Writer) (int, error) {
	// With a tracker, the shell waits at a gate (a pipe on descriptor 3)
	// until the tracker follows it, so not even its first fork goes unseen.
	var gateR, gateW *os.File
	if s.track != nil {
		var err error
		if gateR, gateW, err = os.Pipe(); err != nil {
			return 0, fmt.Errorf("starting the %s sandbox: %w", s.name, err)
		}
		defer gateW.Close()
		script = startGate + script
	}
	argv, env, err := s.wrap(script, dir)
	if err != nil {
		if gateR != nil {
			gateR.Close()
		}
		return 0, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = procAttr(s.tree)
	cg := s.cg.Attach(cmd, "command", true)
	if gateR != nil {
		cmd.ExtraFiles = []*os.File{gateR}
	}
	if s.own != nil {
		stop, err := s.own(cmd, noNet)
		if err != nil {
			cg.Kill()
			return 0, fmt.Errorf("starting the %s sandbox: %w", s.name, err)
		}
		defer stop()
	}
	// A grandchild that escaped the kill cannot hold the output pipe open.
	cmd.WaitDelay = time.Second
	err = cg.Start(cmd)
	if gateR != nil {
		gateR.Close()
	}
	if err != nil {
		cg.Kill()
		return 0, fmt.Errorf("starting the %s sandbox: %w", s.name, err)
	}
	cg.Started()
	defer cg.Kill() // whatever it left, wherever it went
	killAll := func() {}
	if s.track != nil {
		killAll = s.track(cmd.Process.Pid)
		gateW.Write([]byte("go\n"))
		gateW.Close()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := make(chan struct{})
	defer close(stop)
	var over <-chan struct{}
	if s.name != BackendNone {
		over = inner.WatchProcs(cmd.Process.Pid, s.live.Policy().MaxProcs(), stop)
	}
	cgOver, procsHit := cg.OverProcs(stop), false
	defer func() { cg.Report(stderr, procsHit) }() // before the kill removes its counts
	select {
	case err = <-done:
	case <-runCtx.Done():
		killTree(cmd.Process, s.tree)
		killAll()
		err = <-done
	case <-over:
		killTree(cmd.Process, s.tree)
		killAll()
		<-done
		fmt.Fprintf(stderr, "\n[harness: the command ran more than %d processes at once, the sandbox's process limit, and was killed with all it started; raise %s if it needs more]\n", s.live.Policy().MaxProcs(), walls.MaxProcsEnv)
		return 128 + 9, nil
	case <-cgOver:
		procsHit = true
		killTree(cmd.Process, s.tree)
		killAll()
		<-done
		return 128 + 9, nil
	}
	killAll() // what it left running dies with it
	return s.exitCode(runCtx, err)
}

// exitCode is a command's exit status from its Wait error: 128+N for a
// signal, 0 when ctx ended (the caller reports the timeout or the
// interruption) or when a leftover process held the pipe past the exit.
func (s *instance) exitCode(ctx context.Context, err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return 0, nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if code < 0 { // killed by a signal
			code = 128 + signalOf(ee)
		}
		return code, nil
	case errors.Is(err, exec.ErrWaitDelay):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("running the command in the %s sandbox: %w", s.name, err)
	}
	return 0, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// ErrNoReadOnly is returned (wrapped) by Run for a Cmd.ReadOnly command on
// a backend that cannot hold the project read-only.
var ErrNoReadOnly = errors.New("no read-only sandbox")

// CanReadOnly reports whether sb runs Cmd.ReadOnly commands.
func CanReadOnly(sb Sandbox) bool {
	s, ok := sb.(*instance)
	return ok && s.ro != nil
}
