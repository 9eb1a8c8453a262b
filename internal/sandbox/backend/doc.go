// Package backend names what the sandbox's orchestration (package
// sandbox: Open, Run, the bounded output, the tamper and git checks) and
// its mechanisms (the container engine, the Linux launcher, cgroups,
// seatbelt) share, so a mechanism lives in a package of its own and never
// imports the orchestration: the orchestration imports it.
//
// A mechanism hands the orchestration a Runner, something long-lived
// that runs each of a session's commands (the launcher inside the outer
// walls, the session's container), or an argv per command (bwrap,
// sandbox-exec). Either way the orchestration bounds, times out, kills
// and checks the command the same, so backends compare like with like.
//
// HelperExe is the one place that decides which binary a sandbox
// re-executes inside: the small harness-sandbox beside harness when it is
// of the same build and no command can write it, else harness itself.
package backend
