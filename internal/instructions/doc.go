// Package instructions loads the standing instructions a user or project
// gives the agent: AGENTS.md at the project root (CLAUDE.md when there is no
// AGENTS.md, for repositories written for that tool) and ~/.agents/AGENTS.md
// for the user's own habits.
//
// They go into the static system prompt, read once per session, never into
// the per-turn reminder: they are long and do not change, so they belong in
// the cached prefix. The user's file comes first and the project's last, so
// the more specific text has the last word.
//
// Files are read through an Opener: a session passes its sandbox policy's
// OpenRead, so a link is resolved and checked like any file-tool read
// (secrets refused, regular files only); nothing is read past MaxBytes.
package instructions
