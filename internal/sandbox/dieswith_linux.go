package sandbox

// DiesWithHarness reports whether everything a command of sb starts dies
// with the harness process even when harness is killed with SIGKILL (no
// cleanup of its own runs): its commands live in a PID namespace whose init
// dies with harness (bwrap: PR_SET_PDEATHSIG and --die-with-parent;
// landlock with user namespaces: the helper or launcher is that init,
// started with PR_SET_PDEATHSIG), and the kernel kills every process of a
// namespace whose init died. Elsewhere (none, landlock without user
// namespaces, containers) only an orderly end of the session kills what a
// background command started (its process group); what it started may
// outlive a crash of harness.
func DiesWithHarness(sb Sandbox) bool {
	s, ok := sb.(*instance)
	return ok && (s.name == BackendBwrap || s.tree == treeUserPID)
}
