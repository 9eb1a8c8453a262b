package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// Session is a session's own cgroups, made beneath the harness's
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
type Session struct {
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

// Child is one child of the session's cgroups: a v2 directory (dir,
// fd) and, per command on a hybrid host, v1 directories with their tasks
// files open for the command's first thread to write itself into.
type Child struct {
	s   *Session
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

// Disabled, set only by tests, makes Open find none.
var Disabled bool

// Open makes the session's cgroups, or returns nil when no cgroup
// hierarchy here is writable by this process.
func Open(maxProcs int, maxMemory int64) *Session {
	if Disabled {
		return nil
	}
	name := fmt.Sprintf("%s%d-%d", backend.SessionPrefix, os.Getpid(), time.Now().UnixNano())
	s := &Session{maxProcs: maxProcs, maxMemory: maxMemory}
	if own, err := OwnDir(); err == nil {
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
func (s *Session) openV2(own, name string) {
	want := 0
	if s.maxProcs > 0 {
		want++
	}
	if s.maxMemory > 0 {
		want++
	}
	s.tryV2(own, name)
	parent := filepath.Dir(own)
	if s.limitCount() == want || parent == own || !IsCgroup2(parent) {
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
func (s *Session) limitCount() int {
	n := 0
	if s.pids {
		n++
	}
	if s.memory {
		n++
	}
	return n
}

// IsCgroup2 reports whether dir is a directory of a cgroup2 mount (and not,
// say, the tmpfs a hybrid host mounts cgroup2 beneath).
func IsCgroup2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// tryV2 makes the session's v2 directory beneath base, with the
// controllers base hands down, and keeps it if a probe can start inside a
// child of it.
func (s *Session) tryV2(base, name string) bool {
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
	c := s.Attach(probe, "probe", false)
	if c == nil || probe.Run() != nil {
		c.Kill()
		s.closeV2()
		s.dir, s.pids, s.memory = "", false, false
		return false
	}
	c.Kill()
	return true
}

// openV1 makes the session's directories in the v1 pids and memory
// hierarchies, for the limits v2 cannot hold here, and keeps them only if
// a probe can enter a child with its limits set.
func (s *Session) openV1(name string) {
	for _, ctrl := range []string{"pids", "memory"} {
		if (ctrl == "pids" && (s.pids || s.maxProcs <= 0)) || (ctrl == "memory" && (s.memory || s.maxMemory <= 0)) {
			continue // held by v2, or no limit asked for
		}
		own, err := OwnV1Dir(ctrl)
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
	c := s.Attach(probe, "probe", true)
	if c == nil || c.Start(probe) != nil || probe.Wait() != nil {
		c.Kill()
		s.closeV1()
		s.v1 = nil
		return
	}
	c.Started()
	c.v1Child.remove() // not pooled: the probe's exit is all it was for
}

// nprocRlimit is the RLIMIT_NPROC to set inside for a bound of max
// processes: where a cgroup holds the bound, twice it, a backstop only.
// Otherwise the rlimit, which counts every process of the uid in the
// sandbox's user namespace (the supervisor's threads too), could refuse
// a fork first, and the result could not say which bound it met.
func (s *Session) NprocRlimit(max int) int {
	if max > 0 && s.PidsMechanism() != "" {
		return 2 * max
	}
	return max
}

// Writable reports whether sessions here get a cgroup of their own.
func Writable() bool {
	s := Open(0, 0)
	if s == nil {
		return false
	}
	s.Close()
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
		rest, ok := strings.CutPrefix(e.Name(), backend.SessionPrefix)
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

// OwnDir is this process's cgroup v2 directory, from its cgroup file
// ("0::/path") and the cgroup2 mount in mountinfo.
func OwnDir() (string, error) {
	return ownDir(func(id, ctrls string) bool { return id == "0" && ctrls == "" }, func(fstype, super string) bool { return fstype == "cgroup2" })
}

// OwnV1Dir is this process's directory in the v1 hierarchy of ctrl
// ("N:pids:/path" in its cgroup file, a cgroup mount with that option).
func OwnV1Dir(ctrl string) (string, error) {
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

// ownDir finds the line of the calling thread's cgroup file
// ("id:controllers:path") that line accepts, and the mount in mountinfo
// whose type and super options mount accepts, and joins them.
//
// The thread's, not /proc/self's: /proc/self/cgroup shows the thread
// group leader's cgroups, and in v1 a thread moves alone. While Start
// (or a probe) has the main thread inside a command's cgroup for its
// clone, /proc/self/cgroup names that command's cgroup: a session opened
// then took it for the harness's own, made its cgroups inside it, and
// sent its threads "back" into it after every start, where the host
// processes they forked (git) were killed with that command. A thread
// that is not locked is never inside a command's cgroup (Start keeps its
// thread locked until it is back), so the calling thread's file, read
// from that one thread, names the harness's own.
func ownDir(line func(id, ctrls string) bool, mount func(fstype, super string) bool) (string, error) {
	runtime.LockOSThread()
	b, err := os.ReadFile("/proc/thread-self/cgroup")
	runtime.UnlockOSThread()
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
