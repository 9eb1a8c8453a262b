package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupSession is a session's own cgroup v2 directory, made beneath the
// harness's cgroup where that is writable (root, or a delegated subtree):
// each command (or the session's launcher, which holds them all) gets a
// child of it, joined at clone time (CLONE_INTO_CGROUP) so nothing it
// forks is ever outside, killed whole by cgroup.kill, with pids.max and
// memory.max where those controllers can be enabled. Where no cgroup is
// writable the rlimits and the kill scan stand alone.
type cgroupSession struct {
	dir            string
	pids, memory   bool // the controllers enabled for the children
	maxProcs       int
	maxMemory      int64
	n              atomic.Int64
	killFileExists bool // cgroup.kill (Linux 5.14)
}

// cgroupChild is one child of the session's cgroup.
type cgroupChild struct {
	s   *cgroupSession
	dir string
	fd  int
}

// noCgroup, set only by tests, makes openCgroup find none.
var noCgroup bool

// openCgroup makes the session's cgroup, or returns nil when no cgroup v2
// hierarchy here is writable by this process.
func openCgroup(maxProcs int, maxMemory int64) *cgroupSession {
	if noCgroup {
		return nil
	}
	own, err := ownCgroupDir()
	if err != nil {
		return nil
	}
	dir := filepath.Join(own, fmt.Sprintf("%s%d-%d", sessionPrefix, os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	removeStaleCgroups(own)
	s := &cgroupSession{dir: dir, maxProcs: maxProcs, maxMemory: maxMemory}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
		s.killFileExists = true
	}
	avail, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range strings.Fields(string(avail)) {
		switch {
		case c == "pids" && maxProcs > 0:
			s.pids = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0) == nil
		case c == "memory" && maxMemory > 0:
			s.memory = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0) == nil
		}
	}
	// Joining at clone time needs write access to the cgroup.procs of the
	// common ancestor too: try it once, or use no cgroup at all.
	probe := exec.Command("/bin/true")
	c := s.attach(probe, "probe")
	if c == nil || probe.Run() != nil {
		c.kill()
		s.close()
		return nil
	}
	c.kill()
	return s
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
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		dir := filepath.Join(own, e.Name())
		kids, _ := os.ReadDir(dir)
		for _, k := range kids {
			if k.IsDir() {
				_ = os.Remove(filepath.Join(dir, k.Name())) // EBUSY while populated
			}
		}
		_ = os.Remove(dir)
	}
}

// attachCgroup gives s (its read-only variant and launchers too) the
// session's cgroup, where one is writable.
func attachCgroup(s *instance) {
	s.cg = openCgroup(s.pol.MaxProcs, s.pol.MaxMemory)
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
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path := ""
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", errors.New("no cgroup v2 membership")
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
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fs := strings.Fields(pre)
		if len(fs) < 5 {
			continue
		}
		root, mnt := fs[3], fs[4]
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("no cgroup2 mount")
}

// child makes a fresh child cgroup with the limits set, open for
// CLONE_INTO_CGROUP.
func (s *cgroupSession) child(name string) (*cgroupChild, error) {
	dir := filepath.Join(s.dir, fmt.Sprintf("%s-%d", name, s.n.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if s.pids {
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(s.maxProcs)), 0); err != nil {
			os.Remove(dir)
			return nil, fmt.Errorf("setting pids.max: %w", err)
		}
	}
	if s.memory {
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(s.maxMemory, 10)), 0); err != nil {
			os.Remove(dir)
			return nil, fmt.Errorf("setting memory.max: %w", err)
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0) // no escape into swap
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &cgroupChild{s: s, dir: dir, fd: fd}, nil
}

// attach makes cmd start inside a new child cgroup; it returns nil (and
// cmd unchanged) when there is no session cgroup or the child cannot be
// made. The caller closes the child once cmd has started.
func (s *cgroupSession) attach(cmd *exec.Cmd, name string) *cgroupChild {
	if s == nil {
		return nil
	}
	c, err := s.child(name)
	if err != nil {
		return nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, c.fd
	return c
}

// started closes the descriptor the clone used.
func (c *cgroupChild) started() {
	if c != nil && c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// kill ends every process in the child (cgroup.kill, or SIGKILL to each
// member while any is left) and removes it.
func (c *cgroupChild) kill() {
	if c == nil {
		return
	}
	c.started()
	// Usually empty already (the command's tree died with it): then this
	// costs two reads and an rmdir. Otherwise kill, and wait for the
	// kernel to empty it (up to two seconds), killing again now and then.
	for i := 0; i < 2000 && c.populated(); i++ {
		if i%100 == 0 {
			if c.s.killFileExists {
				_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
			} else {
				for _, pid := range c.members() {
					unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	_ = os.Remove(c.dir)
}

func (c *cgroupChild) populated() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return len(c.members()) > 0
	}
	return strings.Contains(string(b), "populated 1")
}

func (c *cgroupChild) members() []int {
	b, _ := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// close kills what is left in the session's cgroup and removes it.
func (s *cgroupSession) close() {
	if s == nil {
		return
	}
	ents, _ := os.ReadDir(s.dir)
	for _, e := range ents {
		if e.IsDir() {
			(&cgroupChild{s: s, dir: filepath.Join(s.dir, e.Name()), fd: -1}).kill()
		}
	}
	_ = os.Remove(s.dir)
}

// text says what the cgroup holds, for doctor.
func (s *cgroupSession) text() string {
	if s == nil {
		return ""
	}
	kill := "cgroup.kill"
	if !s.killFileExists {
		kill = "SIGKILL to each member (no cgroup.kill before Linux 5.14)"
	}
	var lim []string
	if s.pids {
		lim = append(lim, fmt.Sprintf("pids.max %d", s.maxProcs))
	}
	if s.memory {
		lim = append(lim, fmt.Sprintf("memory.max %d MiB", s.maxMemory>>20))
	}
	l := "no pids or memory controller can be enabled there, so the rlimits below bound them"
	if len(lim) > 0 {
		l = strings.Join(lim, ", ") + " per command (per session under the launcher)"
	}
	return fmt.Sprintf("cgroup v2 %s: each command, or the launcher with all it runs, in a child killed whole by %s; %s", s.dir, kill, l)
}
