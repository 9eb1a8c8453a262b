package sandbox

import "github.com/harness-dev/harness/internal/sandbox/walls"

// Limits says, plainly, which rules backend, opened with opts, cannot
// hold on this machine.
func Limits(backend string, _ ...Option) []string {
	switch backend {
	case BackendSeatbelt:
		return []string{
			"no PID namespace: a command's processes are followed with kqueue from its start (the shell waits until the tracker follows it; then every fork, its session and process group) and killed on exit, timeout and Close; a child that calls setsid while its parent exits, both before harness has rescanned after the fork (well under a millisecond's window), can be missed",
			"the sandbox's processes can read other processes' kinfo (kern.proc.pid.*: pid, parent, command name, never arguments or environment), which ps of itself needs",
			"all of every .git is read-only, objects and refs included: commit from your terminal (Linux's writable git data needs a mount namespace)",
			"no private /tmp: /tmp is read-only to commands, $TMPDIR is the session's private directory",
			"no private loopback: unix sockets work inside $TMPDIR only; TCP on localhost only with " + walls.LoopbackEnv + "=1, and then every local listener of the user is reachable",
			"the network proxy listens on a port of the host's loopback (the profile lets commands reach that port only): other processes of this machine can reach it too, under the same rules, and their connections are logged as the session's",
			"no seccomp: terminal ioctls are refused by the profile (no terminal but the pseudo-terminals a command opens itself), not filtered one by one",
			"the file tools run on the host: they judge a path by the identity of what it names; a hard link to a file inside a hidden directory is not recognised there (the profile refuses making one)",
		}
	case BackendNone:
		return []string{"nothing is walled: every command runs directly on this machine"}
	}
	return nil
}
