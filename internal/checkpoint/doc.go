// Package checkpoint keeps what every change the agent makes replaced, so
// any of it can be undone: by the file tools and by shell commands, in a
// project with or without git, deletions, new directories, modes and
// symlinks included.
//
// The walls make the write boundary known: commands write only the
// writable roots. A Store holds a manifest of those roots (every file's
// kind, mode, size, time and content hash) and a content-addressed copy
// of every version it has seen. Around each call that can write (bash,
// write_file, edit_file) it looks again: changes found before the call
// are someone else's (the user editing by hand) and only become the new
// reference; changes found after it are the call's, and are appended to
// a journal as a checkpoint: for each path, what it was and what the call
// left. Why a scan and not an overlay or fanotify: it needs no privilege
// or kernel feature, works the same under every backend and for the file
// tools (which run on the host), and costs a stat per file, which on a
// project's source tree is a few milliseconds; large trees that tools
// rewrite (node_modules, target, build outputs, caches) are not walked.
//
// Every path beneath a root is reached through directory descriptors,
// one name at a time and never through a symlink (walls.Dir), and a file
// is read only after its opened descriptor shows a regular file, the one
// listed (opened non-blocking: a FIFO or device is never read). A command
// swapping a directory or a file for a link to outside, even while the
// scan or an undo runs, leads them nowhere: the store never holds a file
// from outside the roots, and undo never removes, writes or chmods
// outside them. Each checkpoint records its roots; undo refuses, naming
// why, a path beneath none of them or reachable only through a link now,
// --force or not (escape_test.go, escape_linux_test.go: a flipper races
// both 1,000 times, watched by inotify on the outside).
//
// A scan cannot tell who made a change, so attribution comes from who
// knows more. A command run through the session's launcher (bwrap and
// landlock) says which paths its processes asked to write: the sandbox
// sees each creating, writing, renaming, removing, linking or chmod call
// of the command's whole tree through seccomp user notification
// (sandbox/linux/inner, wrote_linux.go) and the result carries the set
// (sandbox.Result.Wrote). Then a change in the call's window is the
// call's only if its path, or a directory above it the call created,
// removed or renamed, is in the set (wrote.go); any other change, a
// person editing by hand, a process outside the sandbox, is someone
// else's: it becomes the new reference, as a change between calls does,
// is named in a note ("changed meanwhile by someone else"), and this
// session's undo never reverts it. Where the set is unknown (a sandbox
// of its own, the container, seatbelt and none backends, a kernel
// without user notification, a command past 4,096 paths, a background
// command running meanwhile) a note says why, once, and every change in
// the window is taken as the call's, as a scan alone must. A file tool
// names the one path it writes: only that path (and the directories it
// needed) is its change, whatever else changed meanwhile. Sessions of one
// project keep their journals side by side and say while a call is in
// flight (checkpoints/running/<session>): a change another session's
// file tool made is never this session's, and a change another session's
// command may have made in the same moment is journaled with that
// session named ("shared"); undo leaves a shared change alone, saying
// whose it may be, unless that session's record, complete by then, shows
// it was not theirs, or --force (others.go). A call harness was killed in
// is recorded after the fact, by the next Open or undo, from its marker
// (killed.go) and the tree saved when it began (<session>.state,
// state.go): what changed while it lived (the marker's heartbeat says
// until when), files it created included, is its change, less what
// another session's record claims, so undo takes it back instead of
// calling it a conflict or leaving its new files behind. Its write set
// died with it: that change is judged as a scan's.
//
// Undo restores, newest first, each path a checkpoint changed to what it
// was, unless the path no longer holds what the agent left there: then
// someone changed it since, and it is a conflict, reported and left
// alone. Files over MaxFile are not kept (a note says so) and a store
// over MaxStore keeps no more versions.
//
// The journal and the copies live with the session's log, where no
// sandboxed command can read them (they may hold what a secret-bearing
// file contained); each entry is written whole before the next call, so
// undo works after harness is killed, from another process (harness undo).
package checkpoint
