// Package inner is what runs inside the sandbox's walls: the inner stage
// that puts up Landlock and seccomp on a command's thread and execs it
// (helper_linux.go), the session's launcher and the per-command
// supervisors (launcherserve_linux.go), the container backend's stages
// (containerserve_linux.go) and the probes. It imports only x/sys and the
// standard library (cmd/harness-sandbox links it alone).
//
// A supervisor also sees what its command writes: one more seccomp filter
// on the command's thread hands each call that creates, writes, renames,
// removes, links or chmods a path to the supervisor (user notification),
// which reads the path, records it and lets the kernel carry the call out
// unchanged (wrote_linux.go). The set goes to the host with the done
// report (Report.Wrote), bounded; past the bound, or where the kernel has
// no user notification, it is unknown. It is attribution for undo, not a
// wall: the walls alone decide what a command may write.
package inner
