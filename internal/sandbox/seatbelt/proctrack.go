package seatbelt

// Descendant tracking where the kernel has no PID namespace (macOS): the
// platform file watches forks with kqueue and reads the process table;
// this file decides, from a table, which processes belong to a command.

// procEntry is one row of the process table.
type procEntry struct {
	pid, ppid, pgid, sid int
	start                int64 // start time (µs), to tell a reused pid
}

// trackedSet are the processes seen in a command's tree: pid -> start.
type trackedSet map[int]int64

// adopt adds to tracked every process of table that descends from one
// already tracked, or shares the command's session (sid) or process group
// (the command leads both: it was started with setsid), and returns the
// processes of table that belong to the command. self (harness) and the
// system's first processes never do.
func (tracked trackedSet) adopt(table []procEntry, sid, self int) []procEntry {
	byPid := make(map[int]procEntry, len(table))
	for _, e := range table {
		byPid[e.pid] = e
	}
	member := func(e procEntry) bool {
		if e.pid <= 1 || e.pid == self {
			return false
		}
		if st, ok := tracked[e.pid]; ok && st == e.start {
			return true
		}
		return e.sid == sid || e.pgid == sid
	}
	var out []procEntry
	in := map[int]bool{}
	// Fixed point: a child is adopted once its parent is.
	for changed := true; changed; {
		changed = false
		for _, e := range table {
			if in[e.pid] {
				continue
			}
			p, hasParent := byPid[e.ppid]
			if member(e) || hasParent && in[p.pid] && e.pid > 1 && e.pid != self {
				in[e.pid] = true
				tracked[e.pid] = e.start
				out = append(out, e)
				changed = true
			}
		}
	}
	return out
}
