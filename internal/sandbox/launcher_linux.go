package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// maxReports bounds what the host reads of one command's reports from its
// supervisor: a few hundred bytes, and the done report's write set
// (inner.MaxWroteReport).
const maxReports = 64<<10 + inner.MaxWroteReport

// launcher is the host's handle on a session's long-lived launcher (see
// linux/inner/launcherserve_linux.go for the inside). Starting the outer walls once per
// session instead of once per command saves bwrap's namespace setup (6–9
// ms) or the landlock backend's user-namespace clone on every command.
type launcher struct {
	backend string
	tree    treeMode
	// pol, when set, gives the snapshot a new launcher mounts; a launcher
	// started at an older generation (before the carve-outs last grew) is
	// retired, so the next command gets one that mounts them all.
	pol walls.Source
	// newCmd builds, from snapshot snap (nil without pol), the unstarted
	// command that runs the launcher inside the outer walls; start adds
	// its control socket as descriptor 3.
	newCmd func(snap *walls.Policy) *exec.Cmd
	// cg, when set, is the session's cgroup: each launcher starts in a
	// child of it, killed whole when the launcher is done.
	cg *cgroup.Session
	// proxy, when set, serves the connections the launcher passes on;
	// netns starts the launcher in a network namespace of its own.
	proxy *netproxy.Proxy
	netns bool

	mu       sync.Mutex
	cur      *launcherProc
	restarts int
	failed   error // a start failed: from then on every command gets a sandbox of its own
	closed   bool
}

type launcherProc struct {
	cmd  *exec.Cmd
	ctrl *net.UnixConn
	diag *walls.BoundedBuffer // the launcher's and its supervisors' stderr
	done chan struct{}        // closed when the process has exited
	err  error                // its Wait error, once done
	gen  int                  // the policy generation it mounts
	cg   *cgroup.Child        // its cgroup, nil without one

	// sups are its supervisors' cgroups by host pid (placement in
	// linux/cgroup), killed with it.
	supMu sync.Mutex
	sups  map[int]*cgroup.Sup

	// inflight counts the commands running through it; a retired
	// launcher is closed when the last one ends.
	inflight int
	retired  bool
}

// launcherStartTimeout bounds the wait for a new launcher's ready message.
const launcherStartTimeout = 20 * time.Second

// get returns the running launcher, starting it if there is none or the
// last one died (then note says so).
func (l *launcher) get() (lp *launcherProc, note string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, "", errors.New("the sandbox is closed")
	}
	if l.failed != nil {
		return nil, "", errNoLauncher
	}
	// One snapshot decides both whether to retire and what a new launcher
	// mounts, so its generation is that of the walls it puts up.
	var snap *walls.Policy
	if l.pol != nil {
		snap = l.pol.Policy()
	}
	if l.cur != nil && snap != nil && l.cur.gen != snap.Generation() {
		l.retire(l.cur)
		l.cur = nil
	}
	if l.cur != nil {
		select {
		case <-l.cur.done:
			note = fmt.Sprintf("[harness: the sandbox's launcher had stopped (%s); started a new one]\n", l.cur.exitText())
			l.cur.ctrl.Close()
			l.cur = nil
			l.restarts++
		default:
			l.cur.inflight++
			return l.cur, "", nil
		}
	}
	gen := 0
	if snap != nil {
		gen = snap.Generation()
	}
	lp, err = l.start(snap)
	if err != nil {
		l.failed = err
		return nil, note + fmt.Sprintf("[harness: %v; running each command in a sandbox of its own from now on]\n", err), errNoLauncher
	}
	lp.gen = gen
	lp.inflight++
	l.cur = lp
	return lp, note, nil
}

// retire stops handing commands to lp and closes it once none runs.
// Called with l.mu held.
func (l *launcher) retire(lp *launcherProc) {
	lp.retired = true
	if lp.inflight == 0 {
		go stopLauncher(lp, l.tree)
	}
}

// release ends one command's use of lp.
func (l *launcher) release(lp *launcherProc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lp.inflight--
	if lp.retired && lp.inflight == 0 {
		go stopLauncher(lp, l.tree)
	}
}

// stopLauncher closes lp's control socket (the launcher then kills what
// runs inside and exits) and kills it if it lingers.
func stopLauncher(lp *launcherProc, tree treeMode) {
	lp.ctrl.Close()
	select {
	case <-lp.done:
	case <-time.After(2 * time.Second):
		killTree(lp.cmd.Process, tree)
		<-lp.done
	}
	lp.cg.Kill()
	lp.killSups()
}

// discard drops lp after a failed send, so the next get starts another.
func (l *launcher) discard(lp *launcherProc) {
	killTree(lp.cmd.Process, l.tree)
	<-lp.done
	lp.cg.Kill()
	lp.killSups()
}

// killSups kills and removes the supervisors' cgroups.
func (lp *launcherProc) killSups() {
	lp.supMu.Lock()
	defer lp.supMu.Unlock()
	for pid, g := range lp.sups {
		g.Kill()
		delete(lp.sups, pid)
	}
}

// place answers the placement request the command's supervisor sends
// first on conn (askPlacement): it finds the supervisor by the pidfd the
// request carries, moves it into a cgroup of its own the first time, and
// returns a child watching that cgroup, with the supervisor's host pid;
// nil when it could not (the command then stays in the launcher's
// cgroup, under the session's limits). A false ok means the supervisor
// sent no request: it is gone.
func (lp *launcherProc) place(cg *cgroup.Session, conn *net.UnixConn, deadline time.Time) (c *cgroup.Child, pid int, ok bool) {
	conn.SetReadDeadline(deadline)
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	conn.SetReadDeadline(time.Time{})
	if err != nil || n == 0 {
		return nil, 0, false
	}
	pidfd := -1
	for i, fd := range inner.ParseRights(oob[:oobn]) {
		if i == 0 {
			pidfd = fd
		} else {
			unix.Close(fd)
		}
	}
	var r inner.Report
	if json.Unmarshal(bytes.TrimSpace(buf[:n]), &r) != nil || !r.Place {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return nil, 0, false
	}
	if pidfd >= 0 {
		pid = pidfdPid(pidfd)
		// Open until the placement is done: it tells whether the pid
		// written to cgroup.procs was still the supervisor's.
		defer unix.Close(pidfd)
	}
	var sup *cgroup.Sup
	if pid > 0 {
		lp.supMu.Lock()
		sup = lp.sups[pid]
		if sup != nil && !sup.Holds(pid) {
			sup.Kill() // its supervisor died, and pid is another process now
			delete(lp.sups, pid)
			sup = nil
		}
		if sup == nil {
			if sup, err = cg.PlaceSupervisor(pid, pidfd); err == nil {
				if lp.sups == nil {
					lp.sups = map[int]*cgroup.Sup{}
				}
				lp.sups[pid] = sup
			}
		}
		lp.supMu.Unlock()
	}
	// The answer carries, for the command's thread, the threads files of
	// the commands' cgroup and of the supervisor's, to go back to.
	var rights []byte
	if sup != nil {
		if enter, leave := sup.ThreadFiles(); enter != nil {
			rights = unix.UnixRights(int(enter.Fd()), int(leave.Fd()))
		}
	}
	msg, _ := json.Marshal(inner.Job{Placed: sup != nil})
	if _, _, err := conn.WriteMsgUnix(append(msg, '\n'), rights, nil); err != nil {
		return nil, 0, false
	}
	if sup == nil {
		return nil, 0, true
	}
	return sup.Watch(), pid, true
}

// endCommand checks that nothing but the supervisor is left in its
// cgroup once its command is done (the supervisor killed its descendants
// before reporting); anything else there is killed with the supervisor,
// and its cgroup removed. It says so on w.
func (lp *launcherProc) endCommand(pid int, w io.Writer) {
	lp.supMu.Lock()
	sup := lp.sups[pid]
	lp.supMu.Unlock()
	if sup == nil {
		return
	}
	for i := 0; i < 50 && len(sup.Left()) > 0; i++ {
		time.Sleep(10 * time.Millisecond) // a killed process still leaving
	}
	if left := sup.Left(); len(left) > 0 {
		fmt.Fprintf(w, "\n[harness: %d processes of the command were still in its cgroup after it ended; they were killed, with its supervisor]\n", len(left))
		lp.supMu.Lock()
		delete(lp.sups, pid)
		lp.supMu.Unlock()
		sup.Kill()
	}
}

// pidfdPid is the pid, in this process's PID namespace, of the process a
// pidfd refers to (its fdinfo's Pid line), 0 if unknown.
func pidfdPid(fd int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func (lp *launcherProc) exitText() string {
	msg := "exited"
	if lp.err != nil {
		msg = lp.err.Error()
	}
	if d, _ := lp.diag.Result(); len(bytes.TrimSpace(d)) > 0 {
		msg += ": " + firstLine(d)
	}
	return msg
}

func (l *launcher) start(snap *walls.Policy) (*launcherProc, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating the launcher's control socket: %w", err)
	}
	local, remote := os.NewFile(uintptr(pair[0]), "launcher control"), os.NewFile(uintptr(pair[1]), "launcher control")
	defer remote.Close()
	conn, err := net.FileConn(local)
	local.Close()
	if err != nil {
		return nil, fmt.Errorf("creating the launcher's control socket: %w", err)
	}
	ctrl := conn.(*net.UnixConn)
	c := l.newCmd(snap)
	c.ExtraFiles = []*os.File{remote}
	if l.proxy != nil {
		pl, pr, err := backend.ProxyChannel()
		if err != nil {
			ctrl.Close()
			return nil, err
		}
		defer pr.Close()
		c.ExtraFiles = append(c.ExtraFiles, pr) // proxyFD
		go backend.ServeProxyChannel(pl, l.proxy)
	}
	diag := &walls.BoundedBuffer{Limit: 8192}
	c.Stderr = diag
	c.SysProcAttr = procAttr(l.tree)
	if l.netns {
		c.SysProcAttr.Cloneflags |= unix.CLONE_NEWNET
	}
	cg := l.cg.Attach(c, "launcher", false)
	c.WaitDelay = time.Second
	err = c.Start()
	remote.Close() // the launcher holds its end: its death ends ours
	if err != nil {
		cg.Kill()
		ctrl.Close()
		return nil, fmt.Errorf("starting the %s sandbox's launcher: %w", l.backend, err)
	}
	cg.Started()
	lp := &launcherProc{cmd: c, ctrl: ctrl, diag: diag, done: make(chan struct{}), cg: cg}
	go func() {
		lp.err = c.Wait()
		close(lp.done)
	}()
	ctrl.SetReadDeadline(time.Now().Add(launcherStartTimeout))
	msg := make([]byte, 64)
	n, err := ctrl.Read(msg)
	ctrl.SetReadDeadline(time.Time{})
	if err != nil || !bytes.HasPrefix(msg[:n], []byte("ready ")) {
		killTree(c.Process, l.tree)
		<-lp.done
		cg.Kill()
		ctrl.Close()
		return nil, fmt.Errorf("the %s sandbox's launcher did not start (%s)", l.backend, lp.exitText())
	}
	return lp, nil
}

func (l *launcher) Close() {
	l.mu.Lock()
	l.closed = true
	lp := l.cur
	l.cur = nil
	l.mu.Unlock()
	if lp == nil {
		return
	}
	stopLauncher(lp, l.tree) // the launcher sees the end, kills every command and exits
}

func (l *launcher) Run(ctx context.Context, script, dir string, stdout, stderr io.Writer) (int, string, error) {
	code, note, _, err := l.RunWrites(ctx, script, dir, nil, nil, stdout, stderr)
	return code, note, err
}

// RunWrites is Run that also returns the paths beneath track the
// command's processes asked to write, as its supervisor saw them
// (linux/inner/wrote_linux.go).
func (l *launcher) RunWrites(ctx context.Context, script, dir string, track []string, journal *os.File, stdout, stderr io.Writer) (int, string, inner.Writes, error) {
	lp, note, err := l.get()
	if err != nil {
		return 0, note, inner.Writes{}, err
	}
	code, w, err := l.runOn(ctx, lp, script, dir, track, journal, stdout, stderr)
	l.release(lp)
	if errors.Is(err, inner.ErrLauncherGone) {
		// It died between commands: start another and try once more.
		l.discard(lp)
		lp, note2, err := l.get()
		if err != nil {
			return 0, note + note2, inner.Writes{}, err
		}
		code, w, err = l.runOn(ctx, lp, script, dir, track, journal, stdout, stderr)
		l.release(lp)
		return code, note + note2, w, err
	}
	return code, note, w, err
}

// runOn runs one command through lp: its control socket and output pipes
// go to a supervisor inside, which reports the start and the exit.
func (l *launcher) runOn(ctx context.Context, lp *launcherProc, script, dir string, track []string, journal *os.File, stdout, stderr io.Writer) (code int, w inner.Writes, err error) {
	ch, err := newCommandChannels(stdout, stderr)
	if err != nil {
		return 0, w, err
	}
	defer ch.conn.Close()
	// The command's own cgroups, where v1 holds its limits: their tasks
	// files go with it, for its first thread to enter.
	cg := l.cg.CommandChild()
	defer cg.Kill()
	rights := append([]int{int(ch.remote.Fd()), int(ch.outW.Fd()), int(ch.errW.Fd())}, cg.PlaceFDs()...)
	if journal != nil && len(track) > 0 {
		rights = append(rights, int(journal.Fd())) // odd, last: the write journal (inner.superviseOne)
	}
	_, _, err = lp.ctrl.WriteMsgUnix([]byte{'j'}, unix.UnixRights(rights...), nil)
	ch.handedOver()
	cg.Started()
	if err != nil {
		ch.outR.Close()
		ch.errR.Close()
		return 0, w, fmt.Errorf("%w: %v", inner.ErrLauncherGone, err)
	}
	copied := ch.copyOut(stdout, stderr)

	enc := json.NewEncoder(ch.conn)
	if d, ok := ctx.Deadline(); ok {
		ch.conn.SetWriteDeadline(d)
	}
	sent := enc.Encode(inner.Job{Script: script, Dir: dir, Track: track}) == nil
	// On a v2-only host the supervisor asks first to be in a cgroup of
	// its own, where the command is then born.
	supPid := 0
	if sent && l.cg.PlacesSupervisors() {
		deadline := time.Now().Add(launcherStartTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		pc, pid, ok := lp.place(l.cg, ch.conn.(*net.UnixConn), deadline)
		switch {
		case !ok:
			sent = false
		case pc != nil:
			cg, supPid = pc, pid
		default: // not placed: it forks in the launcher's cgroup
			cg = l.cg.SessionWatch(lp.cg)
		}
	}
	final, procsHit := awaitReport(ctx, ch.conn, enc, cg, sent)
	ch.conn.Close()
	ch.drain(copied)
	if supPid > 0 {
		lp.endCommand(supPid, stderr)
	}
	cg.Report(stderr, procsHit)
	return lp.outcome(ctx, final, procsHit, len(track) > 0, stderr)
}

// commandChannels are one command's ends: the control socket (conn here,
// remote for the supervisor) and its output pipes (one when stdout and
// stderr are the same writer).
type commandChannels struct {
	conn                   net.Conn
	remote                 *os.File
	outR, outW, errR, errW *os.File
}

func newCommandChannels(stdout, stderr io.Writer) (*commandChannels, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating a command's control socket: %w", err)
	}
	local, remote := os.NewFile(uintptr(pair[0]), "command control"), os.NewFile(uintptr(pair[1]), "command control")
	conn, err := net.FileConn(local)
	local.Close()
	if err != nil {
		remote.Close()
		return nil, fmt.Errorf("creating a command's control socket: %w", err)
	}
	ch := &commandChannels{conn: conn, remote: remote}
	if ch.outR, ch.outW, err = os.Pipe(); err != nil {
		conn.Close()
		remote.Close()
		return nil, fmt.Errorf("creating a command's output pipe: %w", err)
	}
	ch.errR, ch.errW = ch.outR, ch.outW
	if stdout != stderr {
		if ch.errR, ch.errW, err = os.Pipe(); err != nil {
			ch.outR.Close()
			ch.outW.Close()
			conn.Close()
			remote.Close()
			return nil, fmt.Errorf("creating a command's output pipe: %w", err)
		}
	}
	return ch, nil
}

// handedOver closes this process's copies of the supervisor's ends, sent
// (or not) with the job: the pipes end when the command's side does.
func (ch *commandChannels) handedOver() {
	ch.remote.Close()
	ch.outW.Close()
	ch.errW.Close()
}

// copyOut copies the command's output to stdout and stderr until the
// pipes end; the channel closes when both copies are done.
func (ch *commandChannels) copyOut(stdout, stderr io.Writer) <-chan struct{} {
	var wg sync.WaitGroup
	copyTo := func(r *os.File, w io.Writer) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(w, r)
		}()
	}
	copyTo(ch.outR, stdout)
	if ch.errR != ch.outR {
		copyTo(ch.errR, stderr)
	}
	copied := make(chan struct{})
	go func() {
		wg.Wait()
		close(copied)
	}()
	return copied
}

// drain waits for the output copies once the command ended. Every
// process that held the pipes is dead then; the second of grace only
// covers a supervisor that could not kill (it was itself killed).
func (ch *commandChannels) drain(copied <-chan struct{}) {
	select {
	case <-copied:
	case <-time.After(time.Second):
	}
	ch.outR.Close()
	ch.errR.Close()
	<-copied
}

// awaitReport waits for the supervisor's final report (nil if it never
// came), asking it to kill the command when ctx ends or the command
// passes the process bound (procsHit). A job that was never sent gets a
// second for whatever the supervisor still says.
func awaitReport(ctx context.Context, conn net.Conn, enc *json.Encoder, cg *cgroup.Child, sent bool) (final *inner.Report, procsHit bool) {
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	over := cg.OverProcs(stopWatch)
	reports := make(chan inner.Report, 2)
	go func() {
		defer close(reports)
		// The supervisor runs inside the walls: what it sends is bounded
		// (a command's few reports take a few hundred bytes).
		dec := json.NewDecoder(io.LimitReader(conn, maxReports))
		for {
			var r inner.Report
			if dec.Decode(&r) != nil {
				return
			}
			reports <- r
		}
	}()
	kill := func() {
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		if enc.Encode(inner.Job{Kill: true}) != nil {
			conn.(*net.UnixConn).CloseWrite() // the end of the socket kills too
		}
	}
	var grace <-chan time.Time
	cancelled := ctx.Done()
	if !sent {
		cancelled, grace = nil, time.After(time.Second)
	}
	for {
		select {
		case r, ok := <-reports:
			if !ok {
				return nil, procsHit
			}
			if r.Done {
				return &r, procsHit
			}
		case <-over:
			over, procsHit = nil, true
			kill()
		case <-cancelled:
			cancelled = nil
			kill()
			grace = time.After(5 * time.Second)
		case <-grace:
			return nil, procsHit
		}
	}
}

// outcome is a command's exit code and write set from its final report,
// or, without one, why it has none (the caller reports a timeout or an
// interruption itself).
func (lp *launcherProc) outcome(ctx context.Context, final *inner.Report, procsHit, tracked bool, stderr io.Writer) (int, inner.Writes, error) {
	var w inner.Writes
	switch {
	case final != nil:
		w = inner.Writes{Paths: final.Wrote, Known: final.WroteKnown, Why: final.WroteWhy}
		if final.WroteKnown && !tracked {
			w = inner.Writes{Why: "no roots were tracked"}
		} else if !final.WroteKnown && final.WroteWhy == "" {
			w.Why = "the sandbox's supervisor did not say what the command wrote"
		}
		if procsHit {
			return 128 + int(unix.SIGKILL), w, nil
		}
		if final.Procs > 0 {
			fmt.Fprintf(stderr, "\n[harness: the command ran more than %d processes at once, the sandbox's process limit, and was killed with all it started; raise %s if it needs more]\n", final.Procs, walls.MaxProcsEnv)
		}
		return final.Code, w, nil
	case ctx.Err() != nil:
		return 0, w, nil // the caller reports the timeout or interruption
	}
	select {
	case <-lp.done:
		io.WriteString(stderr, fmt.Sprintf("\n[harness: the sandbox's launcher stopped while the command ran (%s); the command and everything it started were killed]\n", lp.exitText()))
	default:
		io.WriteString(stderr, "\n[harness: the command's supervisor inside the sandbox stopped without reporting; the command and everything it started were killed]\n")
	}
	return 128 + int(unix.SIGKILL), w, nil
}
