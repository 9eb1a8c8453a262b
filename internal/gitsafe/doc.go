// Package gitsafe is the one place that says how harness runs git, on the
// host or inside the walls: with every program a repository's
// configuration can name turned off (fsmonitor, hooks, an attributes file
// with filters, a pager), and no optional locks, so a git call of
// harness's own never runs code the agent planted and never blocks the
// user's git.
//
// Args are the options every call starts with; Shell spells a call as
// shell words for a script that runs inside the walls (sandbox.Git,
// batch's diff); Command builds a host call (finding the project root,
// the git shadow's checks on objects a command wrote, the per-turn status
// when the user chose no sandbox), with the host's GIT_* variables
// dropped and Env added, so neither the environment nor the system or
// global configuration adds a program either. Output reads such a call's
// standard output up to MaxOutput (16 MiB, sandbox.Git's bound inside the
// walls) and fails past it, naming the limit: a repository the agent
// wrote can make git print without end.
package gitsafe
