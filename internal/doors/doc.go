// Package doors is the battery of harness's own doors through the walls.
// The sandbox's escape battery (sandbox/battery) attacks the walls from
// inside a command; this one attacks what harness itself does on the
// host on a command's behalf or on what commands left behind: undo and
// checkpoints, settings and hooks, modes, MCP servers and other processes
// it reads, what it prints, the default rules and the user's net rules.
// Each probe builds its own throw-away world (a project, a directory
// outside it, a fake home with a canary secret), attacks one class with
// the real components, and checks the host side: the outside file, the
// store's bytes, the marker a hook would leave, the terminal's bytes.
//
// `harness doctor` runs it after the escape battery; the tests run it as
// root and as nobody. It imports the components it attacks and nothing
// imports it but the CLI.
package doors
