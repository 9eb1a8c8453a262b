package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Under the launcher on a v2-only host each supervisor gets a cgroup of its
// own, placed by the host from a pidfd (see doc.go).

// supName names a supervisor's cgroup; its limits have room for the
// supervisor's own threads and memory above the command's bounds.
const (
	supName           = "supervisor"
	supPidsHeadroom   = 64
	supMemoryHeadroom = 64 << 20
)

// Sup is a placed supervisor's cgroup: dir, with the memory limit
// (and room for the supervisor), holding the supervisor; cmd, a threaded
// child of it with the pids limit, where the supervisor's command thread
// goes to fork each command (a thread moves alone within a threaded
// subtree, cheaply, as in v1), so the command's processes, not the
// supervisor's threads, count against it. cmd is "" where the pids
// controller cannot be had per thread: dir's pids limit, with room for
// the supervisor, then holds both.
type Sup struct {
	c            *Child
	pid          int
	cmd          string
	enter, leave *os.File // cmd's and dir's cgroup.threads, for the command's thread
}

// PlaceSupervisor makes a cgroup for the supervisor the pidfd refers to
// (pid is its host pid), with the limits, and moves it there; nothing
// runs in it yet but the supervisor, which forks its commands there from
// then on.
//
// cgroup.procs takes a pid, not a pidfd, so the move is checked through
// the pidfd afterwards: a supervisor alive (or not yet reaped) after the
// write held its pid all along, so the write moved it. One that died
// first may have left its pid to any process of the host: whatever the
// write moved goes back to the harness's own cgroup, unharmed, and the
// cgroup is removed, never killed (a kill there once SIGKILLed another
// test binary of the suite).
func (s *Session) PlaceSupervisor(pid, pidfd int) (*Sup, error) {
	c, err := s.child(supName, true, false)
	if err != nil {
		return nil, err
	}
	c.Started() // no clone joins it: the O_PATH descriptor is not needed
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		c.Kill()
		return nil, fmt.Errorf("moving the supervisor into its cgroup: %w", err)
	}
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		s.release(c)
		return nil, fmt.Errorf("%w: it ended while it was being placed", ErrSupervisorGone)
	}
	g := &Sup{c: c, pid: pid}
	if s.pids {
		g.threaded()
	}
	return g, nil
}

// ErrSupervisorGone: the supervisor to place had ended.
var ErrSupervisorGone = errors.New("the supervisor is gone")

// release empties c without killing what is in it, moving each member
// to the harness's own cgroup (not the session's parent: where the
// harness's leaf could not hand controllers down, the session was made
// beside it, under a parent that takes no processes), and removes it.
func (s *Session) release(c *Child) {
	dir, err := OwnDir()
	if err != nil {
		dir = filepath.Dir(s.dir)
	}
	own := filepath.Join(dir, "cgroup.procs")
	for i := 0; i < 100 && populated(c.dir); i++ {
		for _, pid := range Members(c.dir) {
			_ = os.WriteFile(own, []byte(strconv.Itoa(pid)), 0)
		}
		time.Sleep(time.Millisecond)
	}
	_ = os.Remove(c.dir)
	c.dir = ""
	c.Kill() // what is left: the descriptor (and v1 children, none here)
}

// threaded makes g's threaded child for commands, with the pids limit,
// or leaves g without one.
func (g *Sup) threaded() {
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

func (g *Sup) closeFiles() {
	for _, f := range []*os.File{g.enter, g.leave} {
		if f != nil {
			f.Close()
		}
	}
	g.enter, g.leave = nil, nil
}

// watch is a child watching g's counts from the command's start.
func (g *Sup) Watch() *Child {
	pids := g.c.dir
	if g.cmd != "" {
		pids = g.cmd
	}
	return g.c.s.watchFrom(pids, g.c.dir, false)
}

// left lists what is in g beside the supervisor: processes in its
// cgroup, threads in the commands' (whose cgroup.procs a threaded cgroup
// does not offer).
func (g *Sup) Left() []int {
	out := others(g.c.dir, g.pid)
	if g.cmd != "" {
		out = append(out, threads(g.cmd)...)
	}
	return out
}

// kill kills everything in g, the supervisor too (cgroup.kill of dir
// covers its threaded child), and removes it.
func (g *Sup) Kill() {
	g.closeFiles()
	if g.cmd != "" {
		for i := 0; i < 200 && len(g.Left()) > 0; i++ {
			if g.c.s.killFileExists && i%50 == 0 {
				_ = os.WriteFile(filepath.Join(g.c.dir, "cgroup.kill"), []byte("1"), 0)
			}
			if !g.c.s.killFileExists {
				// A member listed, then gone and its pid reused in the
				// moment before the signal, is the risk a kernel
				// without cgroup.kill leaves.
				for _, pid := range g.Left() {
					unix.Kill(pid, unix.SIGKILL)
				}
			}
			time.Sleep(time.Millisecond)
		}
		_ = os.Remove(g.cmd)
	}
	g.c.Kill()
}

// Holds reports whether pid is still in g: false when the supervisor g
// was made for died and pid names another process now.
func (g *Sup) Holds(pid int) bool { return slices.Contains(Members(g.c.dir), pid) }

// ThreadFiles are the cgroup.threads files of g's commands' child and of
// g itself, for the supervisor's command thread to enter and go back
// from; nil without a threaded child.
func (g *Sup) ThreadFiles() (enter, leave *os.File) {
	if g.cmd == "" {
		return nil, nil
	}
	return g.enter, g.leave
}
