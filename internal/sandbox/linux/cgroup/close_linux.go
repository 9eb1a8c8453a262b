package cgroup

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// close kills what is left in the session's cgroups and removes them.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.closeV2()
	s.closeV1()
}

func (s *Session) closeV2() {
	if s.dir != "" {
		closeDir(s.dir, s.killFileExists)
	}
}

func (s *Session) closeV1() {
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
func (s *Session) PidsMechanism() string {
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

func (s *Session) MemoryMechanism() string {
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
func (s *Session) Text() []string {
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
func (s *Session) LimitsText(p *walls.Policy, launcher bool) string {
	// Under the launcher on a v2-only host the command shares its cgroup
	// with its supervisor (placement), which has room for it.
	why := ""
	if launcher && s.PlacesSupervisors() {
		why = fmt.Sprintf(" (under the launcher each command runs in its supervisor's cgroup, whose limits have room for the supervisor too: %d processes and %d MiB)", supPidsHeadroom, supMemoryHeadroom>>20)
	}
	procs, mem := "no process limit", "no memory limit"
	if p.MaxProcs() > 0 {
		held := "RLIMIT_NPROC inside the sandbox's user namespace (for a root harness, which the kernel exempts, the supervisor counts the tree and kills it past the bound)"
		if m := s.PidsMechanism(); m != "" {
			held = fmt.Sprintf("%s for the command and all it starts (a fork past it fails and the command is killed), and RLIMIT_NPROC %d inside as a backstop", m, s.NprocRlimit(p.MaxProcs()))
		}
		procs = fmt.Sprintf("processes: %d per command, held by %s", p.MaxProcs(), held)
	}
	if p.MaxMemory() > 0 {
		held, n := fmt.Sprintf("RLIMIT_DATA, per process only (%d processes of a command may each take that much)", p.MaxProcs()), "per process"
		if m := s.MemoryMechanism(); m != "" {
			held, n = m+" for the command and all it starts (the kernel kills inside it at the limit), and RLIMIT_DATA per process", "per command"
		}
		mem = fmt.Sprintf("memory: %d MiB %s, held by %s", p.MaxMemory()>>20, n, held)
	}
	return "resource bounds in force: " + procs + "; " + mem + why
}
