package sandbox

// Limits says, plainly, which rules backend cannot hold on this machine.
func Limits(backend string) []string {
	switch backend {
	case BackendBwrap:
		if LandlockABI() == 0 {
			return []string{"this kernel has no Landlock: the inner stage adds seccomp only (bwrap's read-only mounts still hold every write rule)"}
		}
		return nil
	case BackendLandlock:
		l := []string{"no network namespace, so no private loopback either: socket() is denied for every address family (socketpair still works)"}
		if LandlockABI() < 6 {
			l = append(l, "Landlock below ABI 6: signals to processes outside the sandbox are not scoped")
		}
		if !userNamespaces() {
			l = append(l,
				".git, .agents and hooks inside the project cannot be carved out of a Landlock grant without a mount namespace: changes are detected after each command, not prevented",
				"secrets under $HOME stay readable: Landlock here restricts writes only",
				"/tmp is not private: TMPDIR points at the session's own directory instead",
				"no PID namespace: a process that calls setsid can outlive a timeout")
		}
		return l
	case BackendNone:
		return []string{"nothing is walled: every command runs directly on this machine"}
	}
	return nil
}
