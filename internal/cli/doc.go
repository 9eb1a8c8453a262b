// Package cli is harness's command line: one file per command, each built by
// newXCommand and doing its work in runX(ctx, opts, stdio) so tests call the
// logic directly and testscript scripts drive the real binary. Commands
// parse flags and render; the session they run on is assembled by
// app.Open, from the environment, directories and clock this package
// reads at the process's edge.
//
// Exit codes: 0 ok, 1 failure, 2 usage (a UsageError, decided by type),
// 3 nothing written (run), 124 timeout and 125 walls not up (sandbox,
// which otherwise passes its command's status through), 130 interrupted
// (SIGINT or SIGTERM for run and batch; SIGTERM or SIGHUP for the
// interactive session, where Ctrl-C stops a turn). Each command's help
// says which are its own (TestEveryCommandSaysItsExitStatus).
package cli
