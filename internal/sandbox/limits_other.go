//go:build !linux && !darwin

package sandbox

// Limits says, plainly, which rules backend, opened with opts, cannot
// hold on this machine.
func Limits(backend string, _ ...Option) []string {
	switch backend {
	case BackendSeatbelt:
		return []string{
			"no PID namespace: a process that detaches (setsid, a daemon) can outlive a timeout",
			"no seccomp: terminal ioctls are refused by the profile's default deny, not filtered one by one",
			"no network proxy: every socket is refused, so commands stay offline",
			"no git shadow: .git stays read-only, so commits do not work inside",
		}
	case BackendNone:
		return []string{"nothing is walled: every command runs directly on this machine"}
	}
	return nil
}
