// Package walls holds the sandbox's rules: the Policy (the one place the
// walls' rules live, computed on the host) and the file tools'
// descriptor-based I/O through it. Every backend (package sandbox and its
// mechanisms), the file tools and the permission gate ask it; it runs no
// command and imports nothing of the sandbox's.
//
// NewPolicy computes the project root, the writable roots, the read-only
// carve-outs (every .git, gitdir, hooks path and what hooks delegate to,
// .agents), the hidden secrets, the environment allowlist, the bounds and
// the build caches (cache.go). Reachable and CommandsCanWrite (reach.go)
// tell harness whether a file it takes power from (settings, rules, the
// scripts hooks run) could have been written by a command. CheckRead and
// CheckWrite answer by path after resolving every link (identity.go
// compares device and inode); OpenRead, ReadFile and Walk check what they
// opened, never a path reopened by name. Dir (beneath.go) is harness's own
// file work beneath a root it chose (undo, checkpoints): one name at a
// time from a held descriptor, never through a symlink.
//
// A Policy is an immutable snapshot (TestPolicyHasNoMutableParts keeps it
// so); a session holds a Live (live.go), whose each change publishes a new
// one. Refresh, run after every command and file-tool write, protects
// repositories and hooks paths made mid-session (a tree watch reads only
// directories that changed) and returns them; Keep, plan mode
// (planmode.go) and the sandbox's private /tmp change it too. A reader
// takes one snapshot per decision, so it never sees half of a change
// (immutable_test.go, race_test.go under -race); holders that only decide
// take a Source. A carve-out that cannot be made (a symlink at a protected
// path, a hooks path that cannot be created) fails closed.
//
// The threats each rule answers are in package sandbox's doc.
package walls
