// Package subagent is the task tool: the main agent hands a self-contained
// question to a fresh conversation with its own context window, and gets
// back only the final report. Exploration that would fill the main window
// with file contents and search output stays in the sub-agent's.
//
// A sub-agent shares the session's provider, sandbox and permission gate,
// but gets a read-only tool set: the registry it runs on is the main one
// without write_file, edit_file, write_todos and task, so a write tool cannot
// run even if the model names it, and a sub-agent cannot start another.
// Background commands are the main agent's alone: the read-only bash has
// no background flag (nothing a sub-agent starts outlives its call), and
// bash_output and bash_stop are left out, so a sub-agent neither kills the
// main agent's dev server nor reads away output the main agent has not seen.
// When the main gate is given, it is also wrapped to refuse any call that
// declares a write, so a write tool added later is refused by default.
// The gate and the walls are the session's, so a switch into plan mode
// reaches a sub-agent already running at its next step: its MCP tools
// not declared read-only are refused from then on (permission, modes.go).
// bash is replaced by its read-only variant: the same walls with the
// project and every --add-dir root mounted read-only and only the private
// /tmp (and the build cache) writable, asserted by the sandbox's tests; on
// a backend without that variant (none, seatbelt) sub-agents get no bash,
// and the task tool's description says which.
//
// Its messages go to the session log under a label, so a resumed session
// does not replay them into the main history; its usage is counted into
// the session's. It stops at a step limit and says so in its result.
// Several task calls in one reply run concurrently (Concurrent).
package subagent
