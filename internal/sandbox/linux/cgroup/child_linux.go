package cgroup

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// A cgroup child: one command's (or the launcher's) cgroups, their limits,
// how a process is born inside and how what is left is killed.

// child makes a fresh child of the session's cgroups with the limits set:
// with v2 the v2 one, open for CLONE_INTO_CGROUP, with v1 the v1 ones,
// their tasks files open for the command's first thread.
func (s *Session) child(name string, v2, v1 bool) (*Child, error) {
	n := s.n.Add(1)
	c := &Child{s: s, fd: -1}
	if v2 && s.dir != "" {
		dir := filepath.Join(s.dir, fmt.Sprintf("%s-%d", name, n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		c.dir = dir
		if err := s.limitV2(dir, name == supName); err != nil {
			c.Kill()
			return nil, err
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			c.Kill()
			return nil, err
		}
		c.fd = fd
	}
	if v1 && len(s.v1) > 0 {
		v, err := s.takeV1(name, n)
		if err != nil {
			c.Kill()
			return nil, err
		}
		c.v1Child = v
	}
	return c, nil
}

// takeV1 returns a pooled v1 child, or makes one with the limits set.
func (s *Session) takeV1(name string, n int64) (v1Child, error) {
	s.mu.Lock()
	if k := len(s.pool); k > 0 {
		v := s.pool[k-1]
		s.pool = s.pool[:k-1]
		s.mu.Unlock()
		return v, nil
	}
	s.mu.Unlock()
	var v v1Child
	for _, g := range s.v1 {
		dir := filepath.Join(g.dir, fmt.Sprintf("%s-%d", name, n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			v.remove()
			return v1Child{}, err
		}
		v.dirs = append(v.dirs, dir)
		if err := s.limitV1(g.ctrl, dir); err != nil {
			v.remove()
			return v1Child{}, err
		}
		f, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			v.remove()
			return v1Child{}, err
		}
		v.tasks = append(v.tasks, f)
	}
	return v, nil
}

// remove kills what is in v's directories and removes them.
func (v *v1Child) remove() {
	for _, f := range v.tasks {
		f.Close()
	}
	for _, d := range v.dirs {
		killGroup(d, false)
	}
	v.dirs, v.tasks = nil, nil
}

// limitV2 writes the v2 limits of a child; with headroom, for a
// supervisor's (placement), above them by what the supervisor itself
// takes.
func (s *Session) limitV2(dir string, headroom bool) error {
	procs, mem := s.maxProcs, s.maxMemory
	if headroom {
		procs, mem = procs+supPidsHeadroom, mem+supMemoryHeadroom
	}
	if s.pids {
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(procs)), 0); err != nil {
			return fmt.Errorf("setting pids.max: %w", err)
		}
	}
	if s.memory {
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(mem, 10)), 0); err != nil {
			return fmt.Errorf("setting memory.max: %w", err)
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0) // no escape into swap
	}
	return nil
}

// limitV1 writes the v1 limit of ctrl in a child.
func (s *Session) limitV1(ctrl, dir string) error {
	switch ctrl {
	case "pids":
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(s.maxProcs)), 0); err != nil {
			return fmt.Errorf("setting pids.max: %w", err)
		}
	case "memory":
		v := []byte(strconv.FormatInt(s.maxMemory, 10))
		if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), v, 0); err != nil {
			return fmt.Errorf("setting memory.limit_in_bytes: %w", err)
		}
		// Memory and swap together, where swap is accounted: no escape
		// into swap (after the limit above: it may not be lower).
		if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), v, 0); err != nil {
				return fmt.Errorf("setting memory.memsw.limit_in_bytes: %w", err)
			}
		}
	}
	return nil
}

// attach makes cmd start inside a new child cgroup; it returns nil (and
// cmd unchanged) when there is no session cgroup or the child cannot be
// made. With perCommand the child has the v1 limits too, which only
// start enters: start cmd with it. The caller calls started once cmd has
// started and kill once it is done.
func (s *Session) Attach(cmd *exec.Cmd, name string, perCommand bool) *Child {
	if s == nil {
		return nil
	}
	c, err := s.child(name, true, perCommand)
	if err != nil {
		return nil
	}
	if c.fd >= 0 {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, c.fd
	}
	return c
}

// commandChild is the v1 child of one command run through the launcher,
// whose first thread enters it (placeFDs); nil without v1 limits. With v2
// only, a process joins a cgroup whole, either at clone time
// (CLONE_INTO_CGROUP, which the command's seccomp filter must refuse:
// clone3's flags are out of its reach) or by a move, which takes the
// kernel's threadgroup lock and waits out an RCU grace period (a process
// moved between cgroups by cgroup.procs, the same kernel path, took 6 to
// 24 ms on Linux 6.18 with commands' pauses between moves, against 2 ms
// for a whole sandboxed command). So there each supervisor is moved once
// into a cgroup of its own that every command it forks is born in
// (placement, below), and a command whose supervisor could not be placed
// is watched in the launcher's cgroup (sessionWatch).
func (s *Session) CommandChild() *Child {
	if s == nil || len(s.v1) == 0 {
		return nil
	}
	c, err := s.child("command", false, true)
	if err != nil {
		return nil
	}
	return c
}

// sessionWatch watches the launcher's cgroup, whose limits the session's
// commands share, for a command run there; nil without v2 limits on it.
func (s *Session) SessionWatch(launcher *Child) *Child {
	if s == nil || launcher == nil || launcher.dir == "" || (!s.pids && !s.memory) {
		return nil
	}
	return s.watchFrom(launcher.dir, launcher.dir, true)
}

// placesSupervisors reports whether the launcher's supervisors are each
// to be moved into a cgroup of their own (v2 limits, no v1 ones).
func (s *Session) PlacesSupervisors() bool {
	return s != nil && s.dir != "" && len(s.v1) == 0 && (s.pids || s.memory)
}

// watchFrom is a child that watches the pids limit of pidsDir and the
// memory limit of memDir from now on without owning them (kill leaves
// them alone): the launcher's cgroup (session: the limits are the
// session's) or a supervisor's.
func (s *Session) watchFrom(pidsDir, memDir string, session bool) *Child {
	c := &Child{s: s, fd: -1, shared: pidsDir, sharedMem: memDir, session: session}
	c.basePids, c.baseOOM = c.pidsRefused(), c.oomKills()
	return c
}

// others lists the Members of the cgroup dir other than pid.
func others(dir string, pid int) []int {
	var out []int
	for _, m := range Members(dir) {
		if m != pid {
			out = append(out, m)
		}
	}
	return out
}

// pidsRefused is how many forks the watched cgroup's pids limit refused.
func (c *Child) pidsRefused() int {
	return eventCount(filepath.Join(c.shared, "pids.events"), "max")
}

// start starts cmd inside the child: where it has v1 limits, from an OS
// thread that writes itself into the child's tasks first (a clone
// inherits the cgroups of the thread that makes it, so the command is
// inside from its first instruction) and goes back to the harness's own
// cgroups after.
func (c *Child) Start(cmd *exec.Cmd) error {
	if c == nil || len(c.tasks) == 0 {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		// Locked until it is back: a Go thread must not carry the
		// command's cgroups into other work. A thread that cannot go back
		// stays locked and ends with this goroutine (the command's
		// Pdeathsig then kills it: fail closed).
		runtime.LockOSThread()
		if err := enterTasks(c.tasks); err != nil {
			c.leave()
			errc <- err
			return
		}
		err := cmd.Start()
		if c.leave() == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// leave moves the calling thread back to the harness's own v1 cgroups.
func (c *Child) leave() error {
	return enterTasks(c.s.ownTasks())
}

func (s *Session) ownTasks() []*os.File {
	out := make([]*os.File, len(s.v1))
	for i, g := range s.v1 {
		out[i] = g.ownTasks
	}
	return out
}

// enterTasks writes the calling thread ("0") into each open tasks file:
// v1 moves that one thread, and what it forks from then on is born there.
func enterTasks(tasks []*os.File) error {
	for _, f := range tasks {
		if _, err := f.Write([]byte("0")); err != nil {
			return fmt.Errorf("entering the cgroup %s: %w", filepath.Dir(f.Name()), err)
		}
	}
	return nil
}

// placeFDs are the descriptors of the child's tasks files, which the
// command's supervisor writes its command's thread into (enterFDs) before
// it forks the command, then those of the harness's own, where the
// thread goes back after: a supervisor thread left in the child would put
// the supervisor in the child's member list, and in the way of its kill.
func (c *Child) PlaceFDs() []int {
	if c == nil {
		return nil
	}
	var fds []int
	for _, f := range append(c.tasks[:len(c.tasks):len(c.tasks)], c.s.ownTasks()...) {
		fds = append(fds, int(f.Fd()))
	}
	return fds
}

// started closes the descriptor the clone used (the v1 tasks files stay
// open with the child, for its reuse).
func (c *Child) Started() {
	if c != nil && c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// overProcs closes the returned channel when the child reaches its pids
// limit (procsHit), so the caller kills the command as the kill scan
// would past the bound; nil without a pids limit there.
func (c *Child) OverProcs(stop <-chan struct{}) <-chan struct{} {
	dir := c.pidsDir()
	if dir == "" {
		return nil
	}
	// The poller gets values, not c: kill may hand c's directories on
	// while a last tick still runs.
	v1, max, base := len(c.dirs) > 0, c.s.maxProcs, c.basePids
	return inner.PollUntil(50*time.Millisecond, stop, func() bool { return pidsHit(dir, v1, max, base) })
}

// pidsDir is the child's cgroup with the pids limit, "" for none.
func (c *Child) pidsDir() string {
	switch {
	case c == nil:
		return ""
	case len(c.dirs) > 0 && c.s.v1[0].ctrl == "pids":
		return c.dirs[0]
	case c.dir != "" && c.s.pids:
		return c.dir
	case c.shared != "" && c.s.pids:
		return c.shared
	}
	return ""
}

// procsHit reports whether the child's processes reached its pids limit:
// a refused fork in pids.events (v2; v1 keeps that count at 0), or in v1
// a peak (pids.peak, Linux 6.1; else the count now) at the limit, where
// the next fork fails.
func (c *Child) procsHit() bool {
	dir := c.pidsDir()
	return dir != "" && pidsHit(dir, len(c.dirs) > 0, c.s.maxProcs, c.basePids)
}

// pidsHit is procsHit for the pids cgroup dir (v1 or not) limited to max;
// v2's count of refused forks must have grown past base.
func pidsHit(dir string, v1 bool, max, base int) bool {
	if !v1 {
		return eventCount(filepath.Join(dir, "pids.events"), "max") > base
	}
	peak, err := readInt(filepath.Join(dir, "pids.peak"))
	if err != nil {
		peak, _ = readInt(filepath.Join(dir, "pids.current"))
	}
	return peak >= max
}

func readInt(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// oomKills is how many processes the kernel's OOM killer ended in the
// child at its memory limit.
func (c *Child) oomKills() int {
	switch {
	case c == nil:
		return 0
	case len(c.dirs) > 0 && c.s.v1[len(c.s.v1)-1].ctrl == "memory":
		return eventCount(filepath.Join(c.dirs[len(c.dirs)-1], "memory.oom_control"), "oom_kill")
	case c.dir != "" && c.s.memory:
		return eventCount(filepath.Join(c.dir, "memory.events"), "oom_kill")
	case c.sharedMem != "" && c.s.memory:
		return eventCount(filepath.Join(c.sharedMem, "memory.events"), "oom_kill") - c.baseOOM
	}
	return 0
}

// eventCount reads the count of key from a "key N" lines file.
func eventCount(file, key string) int {
	b, _ := os.ReadFile(file)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// report tells the model which cgroup limit the command met: the process
// limit (killed: the command was killed for it) and the memory limit
// (the kernel ended some of its processes).
func (c *Child) Report(w io.Writer, killed bool) {
	if c == nil {
		return
	}
	c.checked, c.hit, c.ooms = true, killed || c.procsHit(), c.oomKills()
	whose := "for the command and all it started"
	if c.session {
		whose = "shared by the session's commands, which run through one launcher"
	}
	switch {
	case killed:
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's process limit (%d processes and threads %s, held by %s) and was killed with all it started; raise %s if it needs more]\n", c.s.maxProcs, whose, c.s.PidsMechanism(), walls.MaxProcsEnv)
	case c.hit:
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's process limit (%d processes and threads %s, held by %s): forks past it failed; raise %s if it needs more]\n", c.s.maxProcs, whose, c.s.PidsMechanism(), walls.MaxProcsEnv)
	}
	if n := c.ooms; n > 0 {
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's memory limit (%d MiB %s, held by %s): the kernel killed %d of its processes; raise %s if it needs more]\n", c.s.maxMemory>>20, whose, c.s.MemoryMechanism(), n, walls.MaxMemoryEnv)
	}
}

// kill ends every process in the child (cgroup.kill, or SIGKILL to each
// member while any is left) and removes it; v1 directories that ended
// empty and under their limits go back to the pool instead.
func (c *Child) Kill() {
	if c == nil {
		return
	}
	c.Started()
	if c.dir != "" {
		killGroup(c.dir, c.s.killFileExists)
		c.dir = ""
	}
	if len(c.dirs) == 0 {
		return
	}
	if !c.checked {
		c.checked, c.hit, c.ooms = true, c.procsHit(), c.oomKills()
	}
	// A process can be in the pids child only with the memory one too
	// (both are entered at once, and nothing inside can move): reading
	// one member list is enough.
	reuse := !c.hit && c.ooms == 0 && !populated(c.dirs[0])
	s := c.s
	s.mu.Lock()
	if reuse && !s.closed && len(s.pool) < maxPooled {
		s.pool = append(s.pool, c.v1Child)
		c.v1Child = v1Child{}
	}
	s.mu.Unlock()
	c.v1Child.remove()
}

// killGroup empties and removes one cgroup directory. Usually empty
// already (the command's tree died with it): then this costs a read or
// two and an rmdir. Otherwise kill, and wait for the kernel to empty it
// (up to two seconds): cgroup.kill now and then; without it, SIGKILL to
// every member each round, since a process forked after the member list
// was read is missed by that round and must not have time to refill the
// group.
func killGroup(dir string, killFile bool) {
	for i := 0; i < 2000 && populated(dir); i++ {
		switch {
		case killFile && i%100 == 0:
			_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		case !killFile:
			for _, pid := range Members(dir) {
				// v1 lists a process whose one thread is inside: the
				// harness itself while a thread of its own starts a
				// command there (Start). Never kill that.
				if pid != os.Getpid() {
					unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	_ = os.Remove(dir)
}

// populated: v2 says so in cgroup.events; v1 lists its processes.
func populated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return len(Members(dir)) > 0
	}
	return strings.Contains(string(b), "populated 1")
}

func Members(dir string) []int { return ids(dir, "cgroup.procs") }

// threads lists the threads in dir: a threaded cgroup, whose cgroup.procs
// cannot be read, says who is in it only this way.
func threads(dir string) []int { return ids(dir, "cgroup.threads") }

func ids(dir, file string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, file))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
