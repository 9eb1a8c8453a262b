// Package reminder builds the per-turn facts harness gives the model: the
// time, the git branch (or "(detached)", or a note that the project is not a
// git repository), the plan, and the files whose content changed since the
// model was last told (from git status plus content hashes), with the
// instruction to read them again before editing.
//
// Two forms, chosen per provider by the agent (see agent.Options.AppendOnly):
//   - Full, the ephemeral form: every fact on every request, appended after
//     the last cache breakpoint and never stored.
//   - Delta, the persisted form for append-only histories (preserved-thinking
//     models, DeepSeek): only what changed since the last reminder — the time
//     at the start of a user turn or when the hour changes, the branch when it
//     changes, the plan when it changes, file changes when there are any —
//     stored as a block that then stays, so nothing already sent changes.
//
// Building has no side effects: Prepare returns a Pending that is committed
// only once the request is sent (or the block stored). The committed State is
// what the session log keeps, so a resumed session reports edits made while
// harness was not running.
//
// The Builder's git runs through a GitRunner: a session's runs inside the
// sandbox's walls (sandbox.Git), so a filter, fsmonitor or hook the agent
// configured in a repository runs there if at all, never on the host.
// HostGit, the default, runs git as internal/gitsafe does every host call:
// no program that configuration outside the repository names (fsmonitor,
// hooks, system and global config, attributes file), no GIT_* variables of
// the host's, no optional locks.
//
// Hashing is bounded: files are hashed only when their stat changed since
// the last hash; files over MaxHashSize and anything that is not a regular
// file (FIFOs, devices) are known by their stat and never read; regular
// files are opened without blocking and checked again once open; a symlink
// counts by its target's name.
package reminder
