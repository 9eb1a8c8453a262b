// Package battery is the sandbox's escape battery: it opens a session
// through package sandbox, as the CLI does, on a throw-away world (a
// project whose path holds spaces and quotes, a fake home with canary
// secrets, host listeners, a host terminal), attempts each escape from
// inside (or, for host probes, through harness's own host-side code with a
// command as the accomplice), and checks the host side. `harness doctor`
// runs it; so do the tests, as root and as nobody.
//
// It reads a session's mechanisms (the launcher's state, the cgroups)
// through sandbox.Inspect, never the orchestration's internals, so it is
// a client of the sandbox like any other: the orchestration does not
// import it, and it is not linked for what it does not run.
package battery
