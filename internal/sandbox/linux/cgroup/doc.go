// Package cgroup is the session's cgroups (Linux): a directory beneath
// the harness's own (or beside it) where one is writable, a child per
// command, launcher or supervisor with the pids and memory limits set,
// joined at clone time (cgroup v2) or entered by the command's first
// thread (v1 on a hybrid host), and killed whole at its end. Where no
// cgroup is writable Open returns nil, and every method of a nil Session
// or Child does nothing: the rlimits and the kill scan stand alone.
//
// The orchestration (package sandbox: the runner and the launcher) calls
// it; it knows neither. Inspect's accessors (Dir, V1Dirs, the limits it
// holds, LimitedChildren) serve the battery and the tests, which check
// from the host what doctor claims.
package cgroup
