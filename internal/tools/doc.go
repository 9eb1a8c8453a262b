// Package tools holds the tools the model can call and the Registry that runs
// them. The Registry is the only place a tool call is executed, so it is
// where the invariants live: every call passes the permission Gate first, and
// a bad call (unknown tool, invalid JSON, missing argument, a panic) becomes
// a tool result that tells the model what went wrong instead of an error
// that stops the loop.
//
// bash runs through the sandbox package's single entry point; the file tools
// (read_file, write_file, edit_file, glob, grep) run on the host and obey the
// same sandbox Policy. write_file and edit_file refuse a file that changed
// since the agent last saw it (read it, wrote it, or ran a command after
// which it was so): the user's edit in between is never overwritten from
// a stale copy (seen.go). After a write, Env.Diagnose (the session's
// language servers, package lsp, bounded in time) may append the file's
// errors to the result, so the model sees a broken build in the same
// step. write_todos keeps the session's plan (logged whole on
// every change) and read_skill loads a skill's instructions. The task tool
// lives in package subagent, since it builds an agent. web_fetch leaves the
// host only through a ConnServer (the session's netproxy.Proxy), so a fetch
// is decided, address-checked and recorded exactly like a command's
// connection, redirects included. bash with background: true hands the
// command to Jobs, which runs it through the same sandbox Run under a
// context the session's end cancels; bash_output reads its new output and
// bash_stop kills it with all it started. What a process prints or a site
// sends is bounded: a job's latest 1 MiB is kept (without an allocation
// per write), web_fetch reads 10 MiB of a body (a loopback fetch's curl is
// stopped there) and converts 2 MiB of HTML, each cut said with its limit.
// A sub-agent's read-only bash has no Jobs, so nothing outlives it. Jobs
// also knows every foreground bash command in flight, so a switch into
// plan mode (Jobs.Follow, narrow.go) stops whatever runs under writable
// walls, background or foreground, with all it started, and says so to the
// model; what starts after the switch runs read-only. read_file of an
// image returns the
// picture (Result.Image) when Env.Images says the model takes images.
//
// A tool's Spec is sent to the model on every request, so its name, text and
// schema are constants: changing them costs a prefix-cache miss.
package tools
