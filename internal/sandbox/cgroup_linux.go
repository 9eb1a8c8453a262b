package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// cgroupSession is a session's own cgroups, made beneath the harness's
// where that is writable (root, or a delegated subtree).
//
// The cgroup v2 directory: each command (or the session's launcher, which
// holds them all) gets a child of it, joined at clone time
// (CLONE_INTO_CGROUP) so nothing it forks is ever outside, killed whole by
// cgroup.kill, with pids.max and memory.max where those controllers can be
// enabled.
//
// On a hybrid host (systemd's legacy layout, Docker's hosts of old: v2
// mounted without controllers, pids and memory on their own v1
// hierarchies) the limits come from the v1 pids and memory controllers
// instead: each command gets a child of the session's directory in each,
// with pids.max and memory.limit_in_bytes (and memory.memsw, so no swap
// escape), which the command's first process enters before it execs
// (enter): nothing it forks is ever outside either. Where no cgroup is
// writable the rlimits and the kill scan stand alone.
type cgroupSession struct {
	dir            string // the v2 directory, "" without one
	pids, memory   bool   // the v2 controllers enabled for the children
	killFileExists bool   // cgroup.kill (Linux 5.14)
	v1             []v1Group
	maxProcs       int
	maxMemory      int64
	n              atomic.Int64

	// pool holds v1 children whose command ended empty and under its
	// limits, for the next command: making and removing a v1 memory
	// cgroup costs more than the rest of a command's overhead.
	mu     sync.Mutex
	pool   []v1Child
	closed bool
}

// v1Child is one command's set of v1 directories (pids first), with their
// tasks files open for writing.
type v1Child struct {
	dirs  []string
	tasks []*os.File
}

// maxPooled bounds the v1 children kept for reuse (commands at once).
const maxPooled = 4

// v1Group is the session's directory in one legacy (v1) hierarchy, and
// the harness's own, where a host thread returns after placing a command.
type v1Group struct {
	ctrl     string // "pids" or "memory"
	dir, own string
	// ownTasks is own's tasks file, open for writing: where the thread
	// that placed a command goes back (leave).
	ownTasks *os.File
}

// cgroupChild is one child of the session's cgroups: a v2 directory (dir,
// fd) and, per command on a hybrid host, v1 directories with their tasks
// files open for the command's first thread to write itself into.
type cgroupChild struct {
	s   *cgroupSession
	dir string
	fd  int
	v1Child
	// checked, once report has read them: whether the command reached
	// its pids limit and how many OOM kills it had (kill reads them too).
	checked bool
	hit     bool
	ooms    int
	// shared and sharedMem, for a command run through the launcher on a
	// v2-only host, are the cgroups whose pids and memory limits hold the
	// command without its owning them (commandChild): its supervisor's
	// (placement), or with session the launcher's, whose limits the
	// session's commands share; their counts when the command started.
	shared, sharedMem string
	session           bool
	basePids, baseOOM int
}

// noCgroup, set only by tests, makes openCgroup find none.
var noCgroup bool

// openCgroup makes the session's cgroups, or returns nil when no cgroup
// hierarchy here is writable by this process.
func openCgroup(maxProcs int, maxMemory int64) *cgroupSession {
	if noCgroup {
		return nil
	}
	name := fmt.Sprintf("%s%d-%d", sessionPrefix, os.Getpid(), time.Now().UnixNano())
	s := &cgroupSession{maxProcs: maxProcs, maxMemory: maxMemory}
	if own, err := ownCgroupDir(); err == nil {
		s.openV2(own, name)
	}
	s.openV1(name)
	if s.dir == "" && len(s.v1) == 0 {
		return nil
	}
	return s
}

// openV2 makes the session's v2 directory, and keeps it only if a probe
// can start inside a child of it. It goes beneath own or, where the
// limits cannot be had there, beside it, beneath own's parent: a harness
// usually lives in a leaf (a terminal's systemd scope, a service) among
// other processes, and a cgroup with processes of its own cannot enable
// domain controllers such as memory for children (cgroup v2's
// no-internal-process rule), so a child of own gets no limits; the
// parent, a slice of the same delegated subtree, hands them down.
func (s *cgroupSession) openV2(own, name string) {
	want := 0
	if s.maxProcs > 0 {
		want++
	}
	if s.maxMemory > 0 {
		want++
	}
	s.tryV2(own, name)
	parent := filepath.Dir(own)
	if s.limitCount() == want || parent == own || !isCgroup2(parent) {
		return
	}
	mine := struct {
		dir                string
		pids, memory, kill bool
	}{s.dir, s.pids, s.memory, s.killFileExists}
	held := s.limitCount()
	s.dir, s.pids, s.memory = "", false, false
	if s.tryV2(parent, name) && (mine.dir == "" || s.limitCount() > held) {
		if mine.dir != "" {
			closeDir(mine.dir, mine.kill)
		}
		return
	}
	if s.dir != "" {
		closeDir(s.dir, s.killFileExists)
	}
	s.dir, s.pids, s.memory, s.killFileExists = mine.dir, mine.pids, mine.memory, mine.kill
}

// limitCount is how many of the limits the v2 directory holds.
func (s *cgroupSession) limitCount() int {
	n := 0
	if s.pids {
		n++
	}
	if s.memory {
		n++
	}
	return n
}

// isCgroup2 reports whether dir is a directory of a cgroup2 mount (and not,
// say, the tmpfs a hybrid host mounts cgroup2 beneath).
func isCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// tryV2 makes the session's v2 directory beneath base, with the
// controllers base hands down, and keeps it if a probe can start inside a
// child of it.
func (s *cgroupSession) tryV2(base, name string) bool {
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return false
	}
	removeStaleCgroups(base)
	s.dir = dir
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
		s.killFileExists = true
	}
	avail, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range strings.Fields(string(avail)) {
		switch {
		case c == "pids" && s.maxProcs > 0:
			s.pids = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0) == nil
		case c == "memory" && s.maxMemory > 0:
			s.memory = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0) == nil
		}
	}
	// Joining at clone time needs write access to the cgroup.procs of the
	// common ancestor too (base, when it is own's parent): try it once, or
	// use no v2 cgroup here at all.
	probe := exec.Command("/bin/true")
	c := s.attach(probe, "probe", false)
	if c == nil || probe.Run() != nil {
		c.kill()
		s.closeV2()
		s.dir, s.pids, s.memory = "", false, false
		return false
	}
	c.kill()
	return true
}

// openV1 makes the session's directories in the v1 pids and memory
// hierarchies, for the limits v2 cannot hold here, and keeps them only if
// a probe can enter a child with its limits set.
func (s *cgroupSession) openV1(name string) {
	for _, ctrl := range []string{"pids", "memory"} {
		if (ctrl == "pids" && (s.pids || s.maxProcs <= 0)) || (ctrl == "memory" && (s.memory || s.maxMemory <= 0)) {
			continue // held by v2, or no limit asked for
		}
		own, err := ownV1Dir(ctrl)
		if err != nil {
			continue
		}
		ownTasks, err := os.OpenFile(filepath.Join(own, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			continue
		}
		dir := filepath.Join(own, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			ownTasks.Close()
			continue
		}
		removeStaleCgroups(own)
		s.v1 = append(s.v1, v1Group{ctrl: ctrl, dir: dir, own: own, ownTasks: ownTasks})
	}
	if len(s.v1) == 0 {
		return
	}
	probe := exec.Command("/bin/true")
	c := s.attach(probe, "probe", true)
	if c == nil || c.start(probe) != nil || probe.Wait() != nil {
		c.kill()
		s.closeV1()
		s.v1 = nil
		return
	}
	c.started()
	c.v1Child.remove() // not pooled: the probe's exit is all it was for
}

// nprocRlimit is the RLIMIT_NPROC to set inside for a bound of max
// processes: where a cgroup holds the bound, twice it, a backstop only.
// Otherwise the rlimit, which counts every process of the uid in the
// sandbox's user namespace (the supervisor's threads too), could refuse
// a fork first, and the result could not say which bound it met.
func (s *cgroupSession) nprocRlimit(max int) int {
	if max > 0 && s.pidsMechanism() != "" {
		return 2 * max
	}
	return max
}

// cgroupWritable reports whether sessions here get a cgroup of their own.
func cgroupWritable() bool {
	s := openCgroup(0, 0)
	if s == nil {
		return false
	}
	s.close()
	return true
}

// removeStaleCgroups removes the empty cgroups dead harness processes left
// beneath own, as removeStale does their temporary directories. One still
// populated is left alone: its harness may live in another PID namespace,
// where its pid means nothing here (and bwrap's --die-with-parent ends a
// dead harness's commands anyway).
func removeStaleCgroups(own string) {
	ents, _ := os.ReadDir(own)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), sessionPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || walls.ProcessAlive(pid) {
			continue
		}
		dir := filepath.Join(own, e.Name())
		removeChildren(dir)
		_ = os.Remove(dir)
	}
}

// attachCgroup gives s (its read-only variant and launchers too) the
// session's cgroup cg, where one is writable.
func attachCgroup(s *instance, cg *cgroupSession) {
	s.cg = cg
	if s.cg == nil {
		return
	}
	for _, i := range []*instance{s, s.ro} {
		if i == nil {
			continue
		}
		i.cg = s.cg
		if l, ok := i.launch.(*launcher); ok {
			l.cg = s.cg
		}
	}
}

// ownCgroupDir is this process's cgroup v2 directory, from
// /proc/self/cgroup ("0::/path") and the cgroup2 mount in mountinfo.
func ownCgroupDir() (string, error) {
	return ownDir(func(id, ctrls string) bool { return id == "0" && ctrls == "" }, func(fstype, super string) bool { return fstype == "cgroup2" })
}

// ownV1Dir is this process's directory in the v1 hierarchy of ctrl
// ("N:pids:/path" in /proc/self/cgroup, a cgroup mount with that option).
func ownV1Dir(ctrl string) (string, error) {
	has := func(list string) bool {
		for _, c := range strings.Split(list, ",") {
			if c == ctrl {
				return true
			}
		}
		return false
	}
	return ownDir(func(id, ctrls string) bool { return id != "0" && has(ctrls) }, func(fstype, super string) bool { return fstype == "cgroup" && has(super) })
}

// ownDir finds the line of /proc/self/cgroup ("id:controllers:path") that
// line accepts, and the mount in mountinfo whose type and super options
// mount accepts, and joins them.
func ownDir(line func(id, ctrls string) bool, mount func(fstype, super string) bool) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, found := "", false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) == 3 && line(f[0], f[1]) {
			path, found = f[2], true
		}
	}
	if !found {
		return "", errors.New("no membership in that cgroup hierarchy")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fs, ps := strings.Fields(pre), strings.Fields(post)
		if len(fs) < 5 || len(ps) < 3 || !mount(ps[0], ps[2]) {
			continue
		}
		root, mnt := fs[3], fs[4]
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("that cgroup hierarchy is not mounted")
}

// child makes a fresh child of the session's cgroups with the limits set:
// with v2 the v2 one, open for CLONE_INTO_CGROUP, with v1 the v1 ones,
// their tasks files open for the command's first thread.
func (s *cgroupSession) child(name string, v2, v1 bool) (*cgroupChild, error) {
	n := s.n.Add(1)
	c := &cgroupChild{s: s, fd: -1}
	if v2 && s.dir != "" {
		dir := filepath.Join(s.dir, fmt.Sprintf("%s-%d", name, n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		c.dir = dir
		if err := s.limitV2(dir, name == supName); err != nil {
			c.kill()
			return nil, err
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			c.kill()
			return nil, err
		}
		c.fd = fd
	}
	if v1 && len(s.v1) > 0 {
		v, err := s.takeV1(name, n)
		if err != nil {
			c.kill()
			return nil, err
		}
		c.v1Child = v
	}
	return c, nil
}

// takeV1 returns a pooled v1 child, or makes one with the limits set.
func (s *cgroupSession) takeV1(name string, n int64) (v1Child, error) {
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
func (s *cgroupSession) limitV2(dir string, headroom bool) error {
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
func (s *cgroupSession) limitV1(ctrl, dir string) error {
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
func (s *cgroupSession) attach(cmd *exec.Cmd, name string, perCommand bool) *cgroupChild {
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
func (s *cgroupSession) commandChild() *cgroupChild {
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
func (s *cgroupSession) sessionWatch(launcher *cgroupChild) *cgroupChild {
	if s == nil || launcher == nil || launcher.dir == "" || (!s.pids && !s.memory) {
		return nil
	}
	return s.watchFrom(launcher.dir, launcher.dir, true)
}

// placesSupervisors reports whether the launcher's supervisors are each
// to be moved into a cgroup of their own (v2 limits, no v1 ones).
func (s *cgroupSession) placesSupervisors() bool {
	return s != nil && s.dir != "" && len(s.v1) == 0 && (s.pids || s.memory)
}

// supName names a supervisor's cgroup; its limits have room for the
// supervisor's own threads and memory above the command's bounds.
const (
	supName           = "supervisor"
	supPidsHeadroom   = 64
	supMemoryHeadroom = 64 << 20
)

// supGroup is a placed supervisor's cgroup: dir, with the memory limit
// (and room for the supervisor), holding the supervisor; cmd, a threaded
// child of it with the pids limit, where the supervisor's command thread
// goes to fork each command (a thread moves alone within a threaded
// subtree, cheaply, as in v1), so the command's processes, not the
// supervisor's threads, count against it. cmd is "" where the pids
// controller cannot be had per thread: dir's pids limit, with room for
// the supervisor, then holds both.
type supGroup struct {
	c            *cgroupChild
	pid          int
	cmd          string
	enter, leave *os.File // cmd's and dir's cgroup.threads, for the command's thread
}

// placeSupervisor makes a cgroup for the supervisor whose host pid is pid,
// with the limits, and moves it there; nothing runs in it yet but the
// supervisor, which forks its commands there from then on.
func (s *cgroupSession) placeSupervisor(pid int) (*supGroup, error) {
	c, err := s.child(supName, true, false)
	if err != nil {
		return nil, err
	}
	c.started() // no clone joins it: the O_PATH descriptor is not needed
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		c.kill()
		return nil, fmt.Errorf("moving the supervisor into its cgroup: %w", err)
	}
	g := &supGroup{c: c, pid: pid}
	if s.pids {
		g.threaded()
	}
	return g, nil
}

// threaded makes g's threaded child for commands, with the pids limit,
// or leaves g without one.
func (g *supGroup) threaded() {
	dir := filepath.Join(g.c.dir, "command")
	write := func(file, v string) error { return os.WriteFile(file, []byte(v), 0) }
	var err error
	if err = os.Mkdir(dir, 0o755); err == nil {
		err = errors.Join(write(filepath.Join(dir, "cgroup.type"), "threaded"),
			write(filepath.Join(g.c.dir, "cgroup.subtree_control"), "+pids"))
	}
	if err == nil {
		err = write(filepath.Join(dir, "pids.max"), strconv.Itoa(g.c.s.maxProcs))
	}
	if err == nil {
		g.enter, err = os.OpenFile(filepath.Join(dir, "cgroup.threads"), os.O_WRONLY, 0)
	}
	if err == nil {
		g.leave, err = os.OpenFile(filepath.Join(g.c.dir, "cgroup.threads"), os.O_WRONLY, 0)
	}
	if err != nil {
		g.closeFiles()
		os.Remove(dir)
		return
	}
	g.cmd = dir
}

func (g *supGroup) closeFiles() {
	for _, f := range []*os.File{g.enter, g.leave} {
		if f != nil {
			f.Close()
		}
	}
	g.enter, g.leave = nil, nil
}

// watch is a child watching g's counts from the command's start.
func (g *supGroup) watch() *cgroupChild {
	pids := g.c.dir
	if g.cmd != "" {
		pids = g.cmd
	}
	return g.c.s.watchFrom(pids, g.c.dir, false)
}

// left lists what is in g beside the supervisor: processes in its
// cgroup, threads in the commands' (whose cgroup.procs a threaded cgroup
// does not offer).
func (g *supGroup) left() []int {
	out := others(g.c.dir, g.pid)
	if g.cmd != "" {
		out = append(out, threads(g.cmd)...)
	}
	return out
}

// kill kills everything in g, the supervisor too (cgroup.kill of dir
// covers its threaded child), and removes it.
func (g *supGroup) kill() {
	g.closeFiles()
	if g.cmd != "" {
		for i := 0; i < 200 && len(g.left()) > 0; i++ {
			if g.c.s.killFileExists && i%50 == 0 {
				_ = os.WriteFile(filepath.Join(g.c.dir, "cgroup.kill"), []byte("1"), 0)
			}
			for _, pid := range g.left() {
				unix.Kill(pid, unix.SIGKILL)
			}
			time.Sleep(time.Millisecond)
		}
		_ = os.Remove(g.cmd)
	}
	g.c.kill()
}

// watchFrom is a child that watches the pids limit of pidsDir and the
// memory limit of memDir from now on without owning them (kill leaves
// them alone): the launcher's cgroup (session: the limits are the
// session's) or a supervisor's.
func (s *cgroupSession) watchFrom(pidsDir, memDir string, session bool) *cgroupChild {
	c := &cgroupChild{s: s, fd: -1, shared: pidsDir, sharedMem: memDir, session: session}
	c.basePids, c.baseOOM = c.pidsRefused(), c.oomKills()
	return c
}

// others lists the members of the cgroup dir other than pid.
func others(dir string, pid int) []int {
	var out []int
	for _, m := range members(dir) {
		if m != pid {
			out = append(out, m)
		}
	}
	return out
}

// pidsRefused is how many forks the watched cgroup's pids limit refused.
func (c *cgroupChild) pidsRefused() int {
	return eventCount(filepath.Join(c.shared, "pids.events"), "max")
}

// start starts cmd inside the child: where it has v1 limits, from an OS
// thread that writes itself into the child's tasks first (a clone
// inherits the cgroups of the thread that makes it, so the command is
// inside from its first instruction) and goes back to the harness's own
// cgroups after.
func (c *cgroupChild) start(cmd *exec.Cmd) error {
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
func (c *cgroupChild) leave() error {
	return enterTasks(c.s.ownTasks())
}

func (s *cgroupSession) ownTasks() []*os.File {
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

// enterFDs is enterTasks on raw descriptors, for the supervisor inside
// the walls, which gets them from the host with the command.
func enterFDs(fds []int) error {
	for _, fd := range fds {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fmt.Errorf("entering the command's cgroup: %w", err)
		}
	}
	return nil
}

// placeFDs are the descriptors of the child's tasks files, which the
// command's supervisor writes its command's thread into (enterFDs) before
// it forks the command, then those of the harness's own, where the
// thread goes back after: a supervisor thread left in the child would put
// the supervisor in the child's member list, and in the way of its kill.
func (c *cgroupChild) placeFDs() []int {
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
func (c *cgroupChild) started() {
	if c != nil && c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// overProcs closes the returned channel when the child reaches its pids
// limit (procsHit), so the caller kills the command as the kill scan
// would past the bound; nil without a pids limit there.
func (c *cgroupChild) overProcs(stop <-chan struct{}) <-chan struct{} {
	dir := c.pidsDir()
	if dir == "" {
		return nil
	}
	// The poller gets values, not c: kill may hand c's directories on
	// while a last tick still runs.
	v1, max, base := len(c.dirs) > 0, c.s.maxProcs, c.basePids
	return pollUntil(50*time.Millisecond, stop, func() bool { return pidsHit(dir, v1, max, base) })
}

// pidsDir is the child's cgroup with the pids limit, "" for none.
func (c *cgroupChild) pidsDir() string {
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
func (c *cgroupChild) procsHit() bool {
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
func (c *cgroupChild) oomKills() int {
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
func (c *cgroupChild) report(w io.Writer, killed bool) {
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
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's process limit (%d processes and threads %s, held by %s) and was killed with all it started; raise %s if it needs more]\n", c.s.maxProcs, whose, c.s.pidsMechanism(), walls.MaxProcsEnv)
	case c.hit:
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's process limit (%d processes and threads %s, held by %s): forks past it failed; raise %s if it needs more]\n", c.s.maxProcs, whose, c.s.pidsMechanism(), walls.MaxProcsEnv)
	}
	if n := c.ooms; n > 0 {
		fmt.Fprintf(w, "\n[harness: the command reached the sandbox's memory limit (%d MiB %s, held by %s): the kernel killed %d of its processes; raise %s if it needs more]\n", c.s.maxMemory>>20, whose, c.s.memoryMechanism(), n, walls.MaxMemoryEnv)
	}
}

// kill ends every process in the child (cgroup.kill, or SIGKILL to each
// member while any is left) and removes it; v1 directories that ended
// empty and under their limits go back to the pool instead.
func (c *cgroupChild) kill() {
	if c == nil {
		return
	}
	c.started()
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
			for _, pid := range members(dir) {
				unix.Kill(pid, unix.SIGKILL)
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
		return len(members(dir)) > 0
	}
	return strings.Contains(string(b), "populated 1")
}

func members(dir string) []int { return ids(dir, "cgroup.procs") }

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

// close kills what is left in the session's cgroups and removes them.
func (s *cgroupSession) close() {
	if s == nil {
		return
	}
	s.closeV2()
	s.closeV1()
}

func (s *cgroupSession) closeV2() {
	if s.dir != "" {
		closeDir(s.dir, s.killFileExists)
	}
}

func (s *cgroupSession) closeV1() {
	s.mu.Lock()
	s.closed = true
	pool := s.pool
	s.pool = nil
	s.mu.Unlock()
	for i := range pool {
		pool[i].remove()
	}
	for _, g := range s.v1 {
		closeDir(g.dir, false)
		g.ownTasks.Close()
	}
}

func closeDir(dir string, killFile bool) {
	for _, e := range readDirs(dir) {
		if e.IsDir() {
			// A placed supervisor's has a threaded child: cgroup.kill of
			// the supervisor's covers it, and it goes first.
			child := filepath.Join(dir, e.Name())
			if killFile {
				_ = os.WriteFile(filepath.Join(child, "cgroup.kill"), []byte("1"), 0)
			}
			for _, g := range readDirs(child) {
				if g.IsDir() {
					killGroup(filepath.Join(child, g.Name()), false) // emptied by the kill above: wait, remove
				}
			}
			killGroup(child, killFile)
		}
	}
	_ = os.Remove(dir)
}

// readDirs lists dir, nothing if it cannot be read.
func readDirs(dir string) []os.DirEntry {
	ents, _ := os.ReadDir(dir)
	return ents
}

// removeChildren removes the empty cgroups beneath dir, deepest first
// (one still populated stays: EBUSY).
func removeChildren(dir string) {
	for _, e := range readDirs(dir) {
		if e.IsDir() {
			child := filepath.Join(dir, e.Name())
			removeChildren(child)
			_ = os.Remove(child)
		}
	}
}

// pidsMechanism and memoryMechanism name the cgroup that holds each
// limit, "" for none.
func (s *cgroupSession) pidsMechanism() string {
	switch {
	case s == nil:
		return ""
	case s.pids:
		return "cgroup v2 pids.max"
	case len(s.v1) > 0 && s.v1[0].ctrl == "pids":
		return "cgroup v1 pids.max"
	}
	return ""
}

func (s *cgroupSession) memoryMechanism() string {
	switch {
	case s == nil:
		return ""
	case s.memory:
		return "cgroup v2 memory.max"
	case len(s.v1) > 0 && s.v1[len(s.v1)-1].ctrl == "memory":
		return "cgroup v1 memory.limit_in_bytes"
	}
	return ""
}

// text says what the cgroups hold, for doctor.
func (s *cgroupSession) text() []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.dir != "" {
		kill := "cgroup.kill"
		if !s.killFileExists {
			kill = "SIGKILL to each member (no cgroup.kill before Linux 5.14)"
		}
		out = append(out, fmt.Sprintf("cgroup v2 %s: a child per command (a sandbox per command), or per launcher and per supervisor, each command born in its supervisor's (pids in a threaded child), killed whole by %s", s.dir, kill))
	}
	for _, g := range s.v1 {
		out = append(out, fmt.Sprintf("cgroup v1 %s %s: each command in a child of its own, entered before its first instruction, killed and removed at its end", g.ctrl, g.dir))
	}
	return out
}

// limitsText says the resource limits in force under s (nil: no cgroup)
// and what holds each, for doctor; launcher says commands run through the
// session's launcher.
func (s *cgroupSession) limitsText(p *walls.Policy, backend string, launcher bool) string {
	if IsContainer(backend) {
		r := containerResources(p)
		return fmt.Sprintf("resource bounds in force: the container's own cgroup (set by the engine) holds %d processes and %d MiB for the whole session, and RLIMIT_NPROC %d and RLIMIT_DATA %d MiB per process inside", *r.PidsLimit, r.Memory>>20, p.MaxProcs, p.MaxMemory>>20)
	}
	// Under the launcher on a v2-only host the command shares its cgroup
	// with its supervisor (placement), which has room for it.
	why := ""
	if launcher && s.placesSupervisors() {
		why = fmt.Sprintf(" (under the launcher each command runs in its supervisor's cgroup, whose limits have room for the supervisor too: %d processes and %d MiB)", supPidsHeadroom, supMemoryHeadroom>>20)
	}
	procs, mem := "no process limit", "no memory limit"
	if p.MaxProcs > 0 {
		held := "RLIMIT_NPROC inside the sandbox's user namespace (for a root harness, which the kernel exempts, the supervisor counts the tree and kills it past the bound)"
		if m := s.pidsMechanism(); m != "" {
			held = fmt.Sprintf("%s for the command and all it starts (a fork past it fails and the command is killed), and RLIMIT_NPROC %d inside as a backstop", m, s.nprocRlimit(p.MaxProcs))
		}
		procs = fmt.Sprintf("processes: %d per command, held by %s", p.MaxProcs, held)
	}
	if p.MaxMemory > 0 {
		held, n := fmt.Sprintf("RLIMIT_DATA, per process only (%d processes of a command may each take that much)", p.MaxProcs), "per process"
		if m := s.memoryMechanism(); m != "" {
			held, n = m+" for the command and all it starts (the kernel kills inside it at the limit), and RLIMIT_DATA per process", "per command"
		}
		mem = fmt.Sprintf("memory: %d MiB %s, held by %s", p.MaxMemory>>20, n, held)
	}
	return "resource bounds in force: " + procs + "; " + mem + why
}
