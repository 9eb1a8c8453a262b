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
// A Policy is an immutable snapshot: its fields are unexported, its
// accessors return copies, and nothing in it changes once NewPolicy (or a
// change below) has returned it; TestPolicyHasNoMutableParts keeps it so.
// The rules do change during a session, so a session holds a Live
// (live.go): the current snapshot, replaced whole by each change. Refresh,
// run after every command and every file-tool write (Live.WriteFile),
// protects repositories and hooks paths made mid-session (a tree watch
// reads only directories that changed), publishes a snapshot with them and
// returns them; Findings lists them all. Keep uncovers the session's spill
// directory, SetProjectReadOnly is plan mode (planmode.go), SetTempDir
// names the sandbox's private /tmp for the gate. Each change builds on the
// snapshot before it under the Live's lock, so none is lost. A reader takes
// one snapshot per decision (a launcher reads its generation and its
// mounts from the same one) and so never sees half of a change
// (immutable_test.go, policy_race_test.go, race_test.go under -race).
// Holders that only decide take a Source: a Live, or a Policy for rules
// that never change. A carve-out that cannot be made (a symlink at a
// protected path, a hooks path that cannot be created) fails closed.
//
// The threats each rule answers are in package sandbox's doc.
package walls
