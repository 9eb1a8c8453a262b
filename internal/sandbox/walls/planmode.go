package walls

// Plan mode (package extend) makes the project read-only for everything
// that runs, in the kernel: while Live.SetProjectReadOnly(true) holds, every
// command runs under the read-only variant of the walls (as Cmd.ReadOnly:
// the project and --add-dir roots bound read-only, no git writes, the
// private /tmp and the build cache writable), and the file tools' writes
// into those roots are refused by CheckWrite. A backend with no read-only
// variant (none, and landlock without a mount namespace) refuses every
// command instead of running it writable.

// planDenied refuses a write beneath a writable root while the project is
// read-only.
func (p *Policy) planDenied(name string, grant located) error {
	if !p.ProjectReadOnly() {
		return nil
	}
	for _, root := range p.writable {
		if p.under(grant, root, false) {
			return denied(name, "%s is read-only: the project is read-only in plan mode (the user switches to a writing mode when the plan is accepted)", name)
		}
	}
	return nil
}
