package inner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// This file is the inside of a session's launcher: the harness binary
// started once per session inside all the outer walls (bwrap, or the
// landlock backend's namespaces), serving commands until the host closes
// its control socket.
//
// Processes, all the same uid:
//
//	launcher    dumpable 0, child subreaper (or the namespace's init),
//	            seccomp on every thread; keeps idle supervisors
//	supervisor  runs one command at a time and is reused; dumpable 0,
//	            child subreaper; puts up the next command's walls on a
//	            fresh locked thread while idle, forks /bin/sh from that
//	            thread (in a new session) when the command comes, lets the
//	            thread die, and kills every descendant when the command
//	            ends or the host asks
//	command     a Landlock domain of its own, so (Landlock ABI 6) it cannot
//	            signal, and (any ABI) cannot ptrace, the two above, nor
//	            another command
//
// Wire: the host sends the launcher one SOCK_SEQPACKET message per command
// carrying three descriptors (the command's control socket, its stdout and
// its stderr); the launcher forwards it to an idle supervisor (or a new
// one) and closes its copies. The host and the supervisor then talk JSON
// lines over the control socket: a job, then a started report and a done
// report; a kill message or the socket's end kills the command's tree. A
// supervisor tells the launcher "idle" when nothing of its command is left.

// ctrlFD is where the launcher and each supervisor find their socket.
const ctrlFD = 3

// maxJobFDs bounds the descriptors of one command's message: its control
// socket, stdout and stderr, then the tasks files of the cgroups it is to
// enter (sandbox/linux/cgroup: v1 pids and memory), which the command's thread
// writes itself into before it forks the shell, and as many of the
// cgroups it goes back to after, and last the write journal
// (wrote_linux.go).
const maxJobFDs = 8

// maxIdle bounds the idle supervisors the launcher keeps. A supervisor
// runs one command at a time and is reused, so a Go process start (a few
// milliseconds) is paid only when more commands run at once than ever
// before in the session; one is started ahead of the first.
const maxIdle = 4

// job is a host's message to a command's supervisor.
type Job struct {
	Script string `json:"script,omitempty"`
	Dir    string `json:"dir,omitempty"`
	Kill   bool   `json:"kill,omitempty"`
	// Placed answers a supervisor's placement request (report.Place):
	// it is in a cgroup of its own now.
	Placed bool `json:"placed,omitempty"`
	// Track are the roots whose writes the supervisor attributes to the
	// command (wrote_linux.go), as seen inside: the host's checkpointed
	// roots, each also with its symlinks resolved.
	Track []string `json:"track,omitempty"`
}

// report is a supervisor's message to the host.
type Report struct {
	Pid    int  `json:"pid,omitempty"` // the command started
	Done   bool `json:"done,omitempty"`
	Code   int  `json:"code"`             // exit code, with Done
	Signal int  `json:"signal,omitempty"` // killing signal, with Done
	// Procs, with Done, is the process bound the command went past and
	// was killed for.
	Procs int `json:"procs,omitempty"`
	// Place asks the host, before the command starts, to put this
	// supervisor in a cgroup of its own; the message carries a pidfd of
	// it. The host answers with job.Placed.
	Place bool `json:"place,omitempty"`
	// Wrote, with Done and WroteKnown, are the paths beneath Job.Track
	// the command's processes asked to write (wrote_linux.go);
	// WroteWhy, without WroteKnown, says why the set is unknown.
	Wrote      []string `json:"wrote,omitempty"`
	WroteKnown bool     `json:"wrote_known,omitempty"`
	WroteWhy   string   `json:"wrote_why,omitempty"`
}

// serveLauncher runs the launcher until the host closes its socket.
func serveLauncher(cfg HelperConfig) error {
	if cfg.Tmp != "" || len(cfg.ReadOnly) > 0 || len(cfg.Mask) > 0 || len(cfg.Git) > 0 || cfg.DropCaps {
		// First stage (landlock backend, init of fresh namespaces): the
		// mounts need this user namespace's capabilities. Drop them on this
		// thread, securebits locked, and re-execute from it, so that no
		// thread of the serving launcher holds any.
		runtime.LockOSThread()
		if cfg.Tmp != "" || len(cfg.ReadOnly) > 0 || len(cfg.Mask) > 0 || len(cfg.Git) > 0 || cfg.RORoot {
			if err := innerMounts(&cfg); err != nil {
				return err
			}
			// A /proc of this PID namespace: commands see only the
			// sandbox's processes. Some container runtimes forbid it; the
			// host's /proc then stays, and Landlock still keeps commands
			// from ptracing what they see there.
			_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
		}
		if cfg.ProxyPort != 0 {
			if err := loopbackUp(); err != nil {
				return err
			}
		}
		if cfg.DropCaps {
			if err := dropCapabilities(); err != nil {
				return err
			}
		}
		next := cfg
		next.Tmp, next.ReadOnly, next.Mask, next.Rebind, next.Git, next.DropCaps, next.RORoot = "", nil, nil, nil, nil, false, false
		b, err := json.Marshal(next)
		if err != nil {
			return err
		}
		return unix.Exec("/proc/self/exe", []string{os.Args[0], LauncherArg, string(b)}, os.Environ())
	}
	if err := guardSelf(); err != nil {
		return err
	}
	if os.Getpid() != 1 {
		// Orphans of a supervisor that died come here, to be killed.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("becoming a child subreaper: %w", err)
		}
	}
	if err := applySeccompAllThreads(filterFor(cfg)); err != nil {
		return err
	}
	cfg.SeccompInherited = true
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	if cfg.ProxyPort != 0 {
		if err := forwardProxy(cfg.ProxyPort); err != nil {
			return err
		}
		if err := forwardLoopback(proxyFD, cfg.Forward); err != nil {
			return err
		}
	}
	l := &launcherState{cfgJSON: string(b), live: map[int]bool{}, idle: make(chan int, maxIdle)}
	go l.reap()
	sp, err := l.startSupervisor()
	if err != nil {
		return err
	}
	l.idle <- sp
	if err := sendAll(ctrlFD, []byte("ready "+strconv.Itoa(os.Getpid())), nil); err != nil {
		return fmt.Errorf("telling the host the launcher is ready: %w", err)
	}
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(maxJobFDs*4))
	for {
		n, oobn, err := RecvFDs(ctrlFD, buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			break // the host closed the session (or died)
		}
		fds := ParseRights(oob[:oobn])
		l.dispatch(buf[:n], fds)
	}
	killDescendants(selfPid())
	return nil
}

// selfPid is this process's pid as the mounted /proc numbers it, which is
// not getpid() when /proc belongs to an outer PID namespace.
func selfPid() int {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return os.Getpid()
	}
	pid, err := strconv.Atoi(s)
	if err != nil {
		return os.Getpid()
	}
	return pid
}

// killProc SIGKILLs the process that /proc numbers pid, through a pidfd
// of its /proc directory, so it works whichever PID namespace /proc shows.
func killProc(pid int) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	unix.Close(fd)
}

// guardSelf makes this process hard to reach from a command: no
// descriptor beyond stdio survives an exec, and it is not dumpable, so a
// same-uid process without CAP_SYS_PTRACE can neither ptrace it nor open
// its /proc/<pid>/mem, fd or environ.
func guardSelf() error {
	if err := sealDescriptors(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the process non-dumpable: %w", err)
	}
	return nil
}

// sealDescriptors marks every descriptor beyond stdio close-on-exec:
// whatever the harness inherited from its own parent (a terminal
// multiplexer's, an IDE's, an agent's socket) must not reach a command.
func sealDescriptors() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing open descriptors: %w", err)
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

type launcherState struct {
	cfgJSON string
	idle    chan int // launcher ends of idle supervisors' sockets

	mu   sync.Mutex   // held while starting a supervisor and while sweeping
	live map[int]bool // supervisors started and not yet reaped
}

// dispatch hands one command's descriptors to an idle supervisor, or to a
// new one when all are busy.
func (l *launcherState) dispatch(msg []byte, fds []int) {
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for range 3 {
		var sp int
		select {
		case sp = <-l.idle:
		default:
			var err error
			if sp, err = l.startSupervisor(); err != nil {
				fmt.Fprintf(os.Stderr, "harness sandbox launcher: %v\n", err)
				continue
			}
		}
		if sendAll(sp, msg, fds) == nil {
			return
		}
		unix.Shutdown(sp, unix.SHUT_RDWR) // dead or dying: its watcher closes it
	}
}

// watch returns sp to the idle pool each time its supervisor finishes a
// command, and closes it when the supervisor is gone.
func (l *launcherState) watch(sp int) {
	buf := make([]byte, 16)
	for {
		n, _, err := RecvFDs(sp, buf, nil)
		if err != nil || n == 0 {
			unix.Close(sp)
			return
		}
		select {
		case l.idle <- sp:
		default:
			unix.Shutdown(sp, unix.SHUT_RDWR) // enough idle ones: this one ends
		}
	}
}

// startSupervisor starts a supervisor and returns the launcher's end of
// its socket, watched.
func (l *launcherState) startSupervisor() (int, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socketpair for a supervisor: %w", err)
	}
	child := os.NewFile(uintptr(pair[1]), "supervisor socket")
	defer child.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		unix.Close(pair[0])
		return -1, err
	}
	defer null.Close()
	l.mu.Lock()
	pid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], SupervisorArg, l.cfgJSON},
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{null.Fd(), null.Fd(), os.Stderr.Fd(), child.Fd()}})
	if err == nil {
		l.live[pid] = true
	}
	l.mu.Unlock()
	if err != nil {
		unix.Close(pair[0])
		return -1, fmt.Errorf("starting a supervisor: %w", err)
	}
	go l.watch(pair[0])
	return pair[0], nil
}

// reap collects exited children; after each it kills strays: children
// that are not supervisors, which can only be orphans of a supervisor
// that died (killed from inside on a kernel without Landlock signal
// scoping), whose command's tree must not outlive it.
func (l *launcherState) reap() {
	self := selfPid()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		delete(l.live, pid)
		known := map[int]bool{}
		for p := range l.live {
			known[p] = true
		}
		l.mu.Unlock()
		// Supervisors are known by pid in this namespace; /proc may number
		// them otherwise, so match on the NSpid line's last field.
		for _, p := range scanProcs() {
			if p.ppid == self && p.live() && !known[nsPid(p.pid)] {
				killProc(p.pid)
				killDescendants(p.pid)
			}
		}
	}
}

// The main goroutine of a supervisor keeps the main thread: a locked
// goroutine that returns on the main thread wedges it instead of ending
// it, and the main thread is the one a kill(pid) is checked against. The
// lock must be taken in init, while the runtime still runs the main
// goroutine on the main thread: taken later, in main's call path, the
// goroutine may already have been moved to another thread (a stall under
// load is enough), and then a command thread can land on the main thread,
// which prepareThread's guard refuses. Only the supervisor re-exec takes
// it; the harness itself and its other stages are unaffected.
func init() {
	if len(os.Args) > 1 && os.Args[1] == SupervisorArg {
		runtime.LockOSThread() // never unlocked
	}
}

// serveSupervisor runs commands one at a time until the launcher closes
// its socket: one at a time, so that every orphan it inherits as a child
// subreaper belongs to the command in hand.
func serveSupervisor(cfg HelperConfig) error {
	// The main goroutine holds the main thread since init (above), so
	// prepareThread's goroutines never get it.
	if err := guardSelf(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a child subreaper: %w", err)
	}
	if err := applyBounds(cfg); err != nil {
		return err
	}
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(maxJobFDs*4))
	for {
		next := prepareThread(cfg)
		n, oobn, err := RecvFDs(ctrlFD, buf, oob)
		if err != nil || (n == 0 && oobn == 0) {
			close(next.jobs)
			return nil // the launcher is done with this supervisor
		}
		fds := ParseRights(oob[:oobn])
		if len(fds) < 3 || len(fds) > maxJobFDs {
			for _, fd := range fds {
				unix.Close(fd)
			}
			close(next.jobs)
			return fmt.Errorf("want 3 to %d descriptors, got %d", maxJobFDs, len(fds))
		}
		superviseOne(next, fds, cfg.MaxProcs, cfg.Place)
		// Reusable only once nothing of that command is left.
		killDescendants(selfPid())
		if err := sendAll(ctrlFD, []byte("idle"), nil); err != nil {
			return nil
		}
	}
}

// commandThread is a locked OS thread already behind a command's walls,
// waiting to start it.
type commandThread struct {
	jobs    chan startReq
	started chan started
}

type startReq struct {
	job   Job
	stdio []uintptr
	enter []int // cgroup tasks files to enter first
	leave []int // and to go back to after the fork
}

type started struct {
	pid, code int
	err       error
	// listener is the write-attribution filter's (wrote_linux.go), -1
	// with listenErr saying why there is none.
	listener  int
	listenErr error
}

// prepareThread puts up the next command's walls on a fresh locked thread
// while the supervisor waits for the command, so it costs nothing then.
// The thread forks the shell (which inherits the walls) and then ends
// with its goroutine (a locked goroutine that returns takes its thread
// along), so no thread of the supervisor stays in the command's Landlock
// domain, where the command could signal it.
func prepareThread(cfg HelperConfig) commandThread {
	t := commandThread{jobs: make(chan startReq, 1), started: make(chan started, 1)}
	go func() {
		runtime.LockOSThread() // never unlocked, see above
		var werr error
		// The main goroutine holds the main thread from init, so this
		// cannot be it; checked all the same, because walls put up on the
		// main thread would stay on the supervisor for good.
		if unix.Gettid() == unix.Getpid() {
			werr = errors.New("the command's walls would go up on the supervisor's main thread")
		} else {
			werr = restrictThread(cfg)
		}
		listener, lerr := -1, errors.New("the command's walls did not go up")
		if werr == nil {
			listener, lerr = installWriteListener()
		}
		req, ok := <-t.jobs
		if !ok {
			if listener >= 0 {
				unix.Close(listener)
			}
			return
		}
		if werr == nil {
			// This thread only: the shell it forks is born in the
			// command's cgroups, and the thread ends right after.
			werr = enterFDs(req.enter)
		}
		if werr != nil {
			if listener >= 0 {
				unix.Close(listener)
			}
			t.started <- started{code: HelperFailed, err: werr, listener: -1}
			return
		}
		// EAGAIN here is what the last command left: its killed processes
		// still count against the pids limit until they are reaped (a
		// fork bomb's, on a slow machine, for a while). Nothing of this
		// command runs yet, so it waits for them, briefly.
		var pid int
		var err error
		for wait := 3 * time.Second; ; wait -= 20 * time.Millisecond {
			pid, err = syscall.ForkExec("/bin/sh", []string{"/bin/sh", "-c", req.job.Script}, &syscall.ProcAttr{
				Dir: req.job.Dir, Env: os.Environ(), Files: req.stdio,
				Sys: &syscall.SysProcAttr{Setsid: true},
			})
			if !errors.Is(err, syscall.EAGAIN) || wait <= 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Out again before the thread ends, so the supervisor is never a
		// member of the command's cgroup when the host kills what is there.
		enterFDs(req.leave)
		if err != nil {
			if listener >= 0 {
				unix.Close(listener)
			}
			t.started <- started{code: 127, err: fmt.Errorf("cannot start the command in %s: %w", req.job.Dir, err), listener: -1}
			return
		}
		t.started <- started{pid: pid, listener: listener, listenErr: lerr}
	}()
	return t
}

// superviseOne runs the command whose descriptors the host sent (control
// socket, stdout, stderr) on the prepared thread t and reports to the host.
// With place it first asks the host for its cgroup (askPlacement): the
// host moves it into one of its own the first time, and needs to know
// whose command this is every time.
func superviseOne(t commandThread, fds []int, maxProcs int, place bool) {
	cf := splitCommandFDs(fds)
	defer cf.close()
	unix.SetNonblock(fds[0], true) // through the poller, so closing it ends a pending read
	ctrl := os.NewFile(uintptr(fds[0]), "command control")
	defer ctrl.Close()
	out := os.NewFile(uintptr(fds[1]), "command stdout")
	errw := os.NewFile(uintptr(fds[2]), "command stderr")
	dec, enc := json.NewDecoder(ctrl), json.NewEncoder(ctrl)
	enc.SetEscapeHTML(false) // a write set's paths as they are (MaxWroteReport)
	var j Job
	if err := dec.Decode(&j); err != nil {
		close(t.jobs) // the host gave up before sending the job
		out.Close()
		errw.Close()
		return
	}
	s, ok := startJob(t, j, &cf, place, ctrl, out, errw, enc)
	if !ok {
		return
	}
	wrote := func() Writes { return Writes{Why: s.listenErr.Error()} }
	if s.listener >= 0 {
		wrote = serveWrites(s.listener, j.Track, cf.journal)
	}
	if err := enc.Encode(Report{Pid: s.pid}); err != nil {
		killDescendants(selfPid())
		reapAll()
		wrote()
		return
	}
	ws, limit := awaitCommand(s.pid, dec, maxProcs)
	w := wrote() // the tree is gone: the set is whole
	r := Report{Done: true, Code: ws.ExitStatus(), Procs: limit, Wrote: w.Paths, WroteKnown: w.Known, WroteWhy: w.Why}
	if ws.Signaled() {
		r.Code, r.Signal = 128+int(ws.Signal()), int(ws.Signal())
	}
	enc.Encode(r)
}

// reapAll collects exited children and reports whether none is left; a
// child still running means the command left processes behind.
func reapAll() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case err == unix.EINTR:
		case err == unix.ECHILD:
			return true
		case err != nil || pid == 0:
			return false
		}
	}
}

// proc is one line of the process table.
type proc struct {
	pid, ppid int
	state     byte
}

func (p proc) live() bool { return p.state != 'Z' && p.state != 'X' }

// scanProcs reads the process table of this PID namespace.
func scanProcs() []proc {
	ents, _ := os.ReadDir("/proc")
	out := make([]proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		state := f[0][0]
		if state == 'Z' && liveThreads(e.Name()) {
			// A leader that ended only its main thread: a zombie in
			// stat, yet its other threads run on. Alive, to be killed
			// (SIGKILL to the process ends every thread).
			state = 'R'
		}
		out = append(out, proc{pid: pid, ppid: ppid, state: state})
	}
	return out
}

// liveThreads reports whether a process shown as a zombie still has a
// thread that is not one.
func liveThreads(pid string) bool {
	tasks, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		if t.Name() == pid {
			continue
		}
		b, err := os.ReadFile("/proc/" + pid + "/task/" + t.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X' {
			return true
		}
	}
	return false
}

// nsPid is the pid /proc numbers pid by, as seen in this process's own
// PID namespace (the last field of NSpid), or pid when /proc is ours.
func nsPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return pid
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
					return n
				}
			}
		}
	}
	return pid
}

// descendants lists root's living descendants.
func descendants(root int) []int {
	kids := map[int][]proc{}
	for _, p := range scanProcs() {
		kids[p.ppid] = append(kids[p.ppid], p)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, c := range kids[n] {
			if c.pid == root {
				continue
			}
			if c.live() {
				out = append(out, c.pid)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}

// killDescendants SIGKILLs root's descendants until none is left alive.
// As a child subreaper, root inherits every orphan of its tree (setsid,
// nohup and double forks included), so a fresh scan finds them; a
// process forked between a scan and the kill is found by the next one.
func killDescendants(root int) {
	for i := 0; i < 5000; i++ {
		live := descendants(root)
		if len(live) == 0 {
			return
		}
		for _, p := range live {
			killProc(p)
		}
		if i > 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// sendAll sends msg with fds attached on a SOCK_SEQPACKET socket.
func sendAll(fd int, msg []byte, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for {
		err := unix.Sendmsg(fd, msg, oob, nil, 0)
		if err != unix.EINTR {
			return err
		}
	}
}

// recvFDs receives one message; descriptors arrive close-on-exec.
func RecvFDs(fd int, buf, oob []byte) (n, oobn int, err error) {
	for {
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			return n, oobn, err
		}
	}
}

// parseRights extracts the descriptors of an SCM_RIGHTS message.
func ParseRights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

var ErrLauncherGone = errors.New("the sandbox launcher is gone")

// askPlacement asks the host, over the command's control socket, to move
// this supervisor into a cgroup v2 of its own before it forks the
// command: the request carries a pidfd of it, which names it whatever
// PID namespace the host is in. It returns the cgroup threads files the
// answer carries for the command's thread (the commands' threaded cgroup
// to enter, the supervisor's to go back to), if any; an error means the
// host is gone.
func askPlacement(ctrl *os.File) (enter, leave []int, err error) {
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		pidfd = -1 // the host then leaves the command in the launcher's cgroup
	}
	msg, _ := json.Marshal(Report{Place: true})
	var rights []byte
	if pidfd >= 0 {
		rights = unix.UnixRights(pidfd)
	}
	rc, err := ctrl.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var serr error
	werr := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), append(msg, '\n'), rights, nil, 0)
		return serr != unix.EAGAIN
	})
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	if werr != nil || serr != nil {
		return nil, nil, errors.Join(werr, serr)
	}
	// The answer, read whole with its descriptors (a json.Decoder would
	// drop them): nothing else comes before it.
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(2*4))
	var n, oobn int
	werr = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, serr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return serr != unix.EAGAIN
	})
	if werr != nil || serr != nil || n == 0 {
		return nil, nil, errors.Join(werr, serr, io.ErrUnexpectedEOF)
	}
	fds := ParseRights(oob[:oobn])
	var m Job
	if json.Unmarshal(bytes.TrimSpace(buf[:n]), &m) != nil || (len(fds) != 0 && len(fds) != 2) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, nil, errors.New("a placement answer the supervisor cannot read")
	}
	if len(fds) == 2 {
		enter, leave = fds[:1], fds[1:]
	}
	return enter, leave, nil
}
