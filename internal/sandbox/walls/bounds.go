package walls

import (
	"fmt"
	"strconv"
	"strings"
)

// Resource bounds of one session's commands. Defaults hold off a fork bomb
// or a runaway build without getting in the way of ordinary ones (a large
// link or a parallel compile takes a few GiB); the environment variables
// below change them (0 turns one off). The memory default is
// DefaultMaxMemory or half the machine's memory, whichever is less, so a
// runaway command meets its bound before the machine runs out.
const (
	DefaultMaxProcs  = 1024
	DefaultMaxMemory = 8 << 30

	// MaxProcsEnv and MaxMemoryEnv override the defaults: a number of
	// processes, and bytes with an optional K, M or G suffix.
	MaxProcsEnv  = "HARNESS_SANDBOX_PIDS"
	MaxMemoryEnv = "HARNESS_SANDBOX_MEMORY"
)

// bounds reads the limits from the environment, or the defaults.
func bounds(env []string) (procs int, mem int64, err error) {
	procs, mem = DefaultMaxProcs, DefaultMaxMemory
	if half := physicalMemory() / 2; half > 0 && half < mem {
		mem = half
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case MaxProcsEnv:
			n, perr := strconv.Atoi(strings.TrimSpace(v))
			if perr != nil || n < 0 {
				return 0, 0, fmt.Errorf("%s=%q: want a number of processes (0 for no limit)", MaxProcsEnv, v)
			}
			procs = n
		case MaxMemoryEnv:
			n, perr := parseBytes(v)
			if perr != nil {
				return 0, 0, fmt.Errorf("%s=%q: want bytes, like 4G or 512M (0 for no limit)", MaxMemoryEnv, v)
			}
			mem = n
		}
	}
	return procs, mem, nil
}

func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for suf, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if t, ok := strings.CutSuffix(strings.TrimSuffix(s, "B"), suf); ok && t != "" {
			s, mult = t, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// LimitsText says the resource bounds in force, for doctor and /sandbox.
func (p *Policy) LimitsText() string {
	procs, mem := "no limit", "no limit"
	if p.maxProcs > 0 {
		procs = strconv.Itoa(p.maxProcs)
	}
	if p.maxMemory > 0 {
		mem = fmt.Sprintf("%d MiB", p.maxMemory>>20)
	}
	return fmt.Sprintf("processes per session's commands: %s (RLIMIT_NPROC inside the sandbox's user namespace; for a root harness, which the kernel exempts, the supervisor counts and kills the tree); memory: %s of data per process (RLIMIT_DATA); set %s and %s to change them", procs, mem, MaxProcsEnv, MaxMemoryEnv)
}

// LimitNote explains a failure that looks like a resource bound.
func (p *Policy) LimitNote(out []byte) string {
	o := string(out)
	switch {
	case strings.Contains(o, "[harness: the command reached the sandbox's"):
		return "" // a cgroup said which bound, and for sure
	case p.maxMemory > 0 && (strings.Contains(o, "annot allocate memory") || strings.Contains(o, "out of memory") || strings.Contains(o, "MemoryError") || strings.Contains(o, "failed to allocate")):
		return fmt.Sprintf("\n[harness: the command may have hit the sandbox's memory limit (%d MiB of data per process); raise %s if it needs more]\n", p.maxMemory>>20, MaxMemoryEnv)
	case p.maxProcs > 0 && (strings.Contains(o, "Resource temporarily unavailable") || strings.Contains(o, "fork: retry") || strings.Contains(o, "Cannot fork")):
		return fmt.Sprintf("\n[harness: the command may have hit the sandbox's process limit (%d); raise %s if it needs more]\n", p.maxProcs, MaxProcsEnv)
	}
	return ""
}
