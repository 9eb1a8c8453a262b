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
// The harness's own git calls run with core.fsmonitor off, hooks pointed at
// /dev/null and no optional locks, so a project cannot make them run its
// code or contend with the user's git.
package reminder
