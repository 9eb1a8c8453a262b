package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// What the escape battery and the tests read of a session's cgroups, from
// the host, while its commands run.

// limitedChildren lists the session's cgroups holding a process that
// carry the session's limits, each with its limit.
func (s *Session) LimitedChildren() []string {
	// A supervisor's cgroup (placement) holds a command while its
	// threaded child has threads: the pids limit is there, the memory
	// limit (with the supervisor's room) on the supervisor's.
	type limit struct{ file, want string }
	var dirs []string
	var lims []limit
	if s.dir != "" && (s.pids || s.memory) {
		dirs = append(dirs, s.dir)
	}
	for _, g := range s.v1 {
		dirs = append(dirs, g.dir)
	}
	if s.PidsMechanism() != "" {
		lims = append(lims, limit{"pids.max", fmt.Sprint(s.maxProcs)})
	}
	if s.MemoryMechanism() != "" {
		lims = append(lims, limit{"memory.limit_in_bytes", fmt.Sprint(s.maxMemory)}, limit{"memory.max", fmt.Sprint(s.maxMemory)})
	}
	var out []string
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			// Under the launcher a v2 child per supervisor holds its
			// commands, one at a time (placement; the launcher's own
			// child only where supervisors are not placed); every v1
			// child is a command's (reused, whatever its name).
			if !e.IsDir() || (d == s.dir && !strings.HasPrefix(e.Name(), "command-") && !strings.HasPrefix(e.Name(), supName+"-") &&
				(s.PlacesSupervisors() || !strings.HasPrefix(e.Name(), "launcher-"))) {
				continue
			}
			child := filepath.Join(d, e.Name())
			if d == s.dir && strings.HasPrefix(e.Name(), supName+"-") {
				out = append(out, s.SupervisorLimits(child)...)
				continue
			}
			if !populated(child) {
				continue
			}
			for _, l := range lims {
				if b, err := os.ReadFile(filepath.Join(child, l.file)); err == nil && strings.TrimSpace(string(b)) == l.want {
					out = append(out, fmt.Sprintf("%s %s %s", child, l.file, l.want))
				}
			}
		}
	}
	return out
}

// populatedCommands lists the session's per-command cgroups that hold a
// process (none should once its command has ended).
func (s *Session) PopulatedCommands() []string {
	if s == nil {
		return nil
	}
	dirs := []string{}
	if s.dir != "" {
		dirs = append(dirs, s.dir)
	}
	for _, g := range s.v1 {
		dirs = append(dirs, g.dir)
	}
	var out []string
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			child := filepath.Join(d, e.Name())
			switch {
			case !e.IsDir():
			case d == s.dir && strings.HasPrefix(e.Name(), supName+"-"):
				// A supervisor's: it stays there between its commands,
				// which leave nothing in it or in its threaded child.
				if len(Members(child)) > 1 || len(threads(filepath.Join(child, "command"))) > 0 {
					out = append(out, child)
				}
			case (d != s.dir || strings.HasPrefix(e.Name(), "command-")) && populated(child):
				out = append(out, child)
			}
		}
	}
	return out
}

// supervisorLimits lists a placed supervisor's limits while a command runs
// there, nil otherwise.
func (s *Session) SupervisorLimits(dir string) []string {
	cmd := filepath.Join(dir, "command")
	if len(threads(cmd)) == 0 {
		return nil
	}
	var out []string
	if b, err := os.ReadFile(filepath.Join(cmd, "pids.max")); err == nil && s.pids && strings.TrimSpace(string(b)) == fmt.Sprint(s.maxProcs) {
		out = append(out, fmt.Sprintf("%s pids.max %d", cmd, s.maxProcs))
	}
	want := s.maxMemory + supMemoryHeadroom
	if b, err := os.ReadFile(filepath.Join(dir, "memory.max")); err == nil && s.memory && strings.TrimSpace(string(b)) == fmt.Sprint(want) {
		out = append(out, fmt.Sprintf("%s memory.max %d (%d MiB and %d MiB for the supervisor)", dir, want, s.maxMemory>>20, supMemoryHeadroom>>20))
	}
	return out
}

// Dir is the session's cgroup v2 directory, "" for none.
func (s *Session) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

// V1Dirs are the session's directories in the v1 hierarchies (pids
// first), nil for none.
func (s *Session) V1Dirs() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, g := range s.v1 {
		out = append(out, g.dir)
	}
	return out
}

// HostOffersLimits reports whether this host offers this process a
// pids and a memory controller where it can make cgroups: on cgroup v2,
// both in its own cgroup's list (its parent hands them down) and a place
// it may write, the root cgroup or its parent (a delegated subtree, as
// systemd gives each user); for root, the v1 hierarchies of a hybrid host.
// The tests use it to know what the battery must find.
func HostOffersLimits() bool {
	if own, err := OwnDir(); err == nil {
		b, _ := os.ReadFile(filepath.Join(own, "controllers"))
		f := strings.Fields(string(b))
		parent := filepath.Dir(own)
		writable := unix.Access(filepath.Join(parent, "procs"), unix.W_OK) == nil && IsCgroup2(parent)
		if !IsCgroup2(parent) {
			writable = unix.Access(filepath.Join(own, "procs"), unix.W_OK) == nil
		}
		if slices.Contains(f, "pids") && slices.Contains(f, "memory") && writable {
			return true
		}
	}
	if os.Geteuid() != 0 {
		return false
	}
	_, perr := OwnV1Dir("pids")
	_, merr := OwnV1Dir("memory")
	return perr == nil && merr == nil
}
