// Package autorun finds the files in a project that other programs run
// later, on the user's machine and outside the walls: a husky or
// lefthook hook at the next git commit, an .envrc when the shell enters
// the directory, a VS Code task on folder open, a dev container's
// commands, a .pth file at the next python of a virtualenv, the
// instructions, settings (hooks) and MCP servers the next agent session
// loads, a harness.Dockerfile the next container session builds, a
// package manager's config naming a program.
//
// The walls let a command write the project, so they cannot stop these
// being written: only being run unnoticed. A Watch takes a snapshot of
// every such file under a set of roots when the session opens and, when
// asked (the end of each turn, the end of a run), says which were
// created, changed or removed since, with what runs each. Contents are
// compared by hash, so a rewrite that keeps size and time is seen too.
//
// What is looked at is bounded by name, not by a tree walk: fixed paths
// at each root, the same names one and two directories down (monorepo
// packages), and the site-packages of each virtualenv at the root (a
// directory holding pyvenv.cfg). The kinds are listed once, in kinds.
package autorun
