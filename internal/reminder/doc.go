// Package reminder builds the late injection: per-request facts appended
// after the last stored block (after the cache breakpoint) and never stored
// in history, so they can change every request without breaking the
// provider's prefix cache.
//
// A reminder holds <context> (the time to the minute and the git branch, or
// "(detached)", or a note that the project is not a git repository), then
// <todos> when a plan exists, then <file_changes>: files whose content
// changed since the previous request (from git status plus content hashes),
// with the instruction to read them again before editing.
//
// The Builder's git runs through a GitRunner: a session's runs inside the
// sandbox's walls (sandbox.Git), so a filter, fsmonitor or hook the agent
// configured in a repository runs there if at all, never on the host.
// HostGit, the default, turns off every program status could run that
// configuration outside the repository names (fsmonitor, hooks, system
// and global config, attributes file) and takes no optional locks. The
// change check opens only regular files, without blocking, and reads at
// most 64 MiB of each; a symlink counts by its target's name.
package reminder
