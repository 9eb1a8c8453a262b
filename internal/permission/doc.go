// Package permission decides which tool calls need a human.
//
// The sandbox makes bad behaviour impossible; this package decides what is
// asked about, what is allowed silently and what is refused up front, and
// tells the model why. A Gate answers every tool call with a Decision —
// Allow, Ask or Deny — and the Rule that decided it; Check adds the
// prompt (or, headless, turns Ask into a refusal), persists "always"
// answers and records every decision.
//
// # Shell commands are parsed, not split
//
// A bash command is parsed with mvdan.cc/sh/v3/syntax and every command
// that would run is checked: in pipelines, lists, subshells, command and
// process substitutions, here-documents, if/for/while/case bodies and
// function bodies. Strings run later are parsed and checked too: eval,
// sh -c / bash -c, alias values, trap actions, find -exec, xargs. Wrappers
// (env, nice, nohup, timeout, time, stdbuf, setsid, command, builtin,
// exec, sudo) are looked through to the command they run, and git's global
// options (-C, --git-dir, ...) are removed so "git -C d push" is "git push".
// Quotes and backslashes are removed before matching (curl spelled with
// an empty quoted string inside it, or with a leading backslash, is curl;
// so is /usr/bin/curl). A command name computed at run time
// ($X, $(...), globs, brace expansion) is asked about, never allowed; so is
// a command that cannot be parsed, a name with non-ASCII characters, and a
// script that sets PATH, LD_*, GIT_* and similar variables. A word computed
// at run time may match any word of a deny or ask rule, so "rg $X" asks
// (X could be --pre). Writes by redirection, tee, rm, cp, mv, touch, mkdir,
// chmod, chown, dd of= and find -delete to a path outside the writable
// roots (relative paths resolved against the tracked cd, "../" and
// symlinks resolved) are denied up front; /dev/null and the sandbox's
// private /tmp are fine. The strictest part of a command decides: deny >
// ask > allow.
//
// # Rules
//
// Rules live in two files with the same format: the user's
// (~/.agents/permissions) and the project's (<project>/.agents/permissions,
// inside a sandbox carve-out, so the agent cannot grant itself anything).
// One rule per line; blank lines and lines starting with # are ignored:
//
//	# VERDICT  TOOL   PATTERN
//	allow      bash   go test *
//	allow      bash   make build
//	ask        bash   git commit *
//	deny       bash   docker *
//	deny       read   ~/private/**
//	allow      write  src/**
//	deny       edit_file  go.sum
//
// VERDICT is allow, ask or deny. TOOL is bash, read (any file tool
// reading), write (any file tool writing) or a tool name. A bash PATTERN is
// command words: a word may use * (any characters) and ? (one character);
// a word that is * alone matches any number of words, including none, so
// "go test *" matches "go test" and "go test ./..."; quotes and
// backslashes make characters literal. A file PATTERN is a path (relative
// to the project, ~/..., or absolute) where * and ? stay within one path
// segment and ** matches any number of segments.
//
// Among the rules that match one command, the most specific wins: more
// words that are not *, then more literal characters; on a tie the later
// source (built-in defaults, user file, project file, --allow/--deny
// flags) and then the stricter verdict. A project rule never loosens a
// deny from the defaults, the user file or the flags: the project file can
// tighten but not loosen. Nothing matched: bash and writes ask, reads are
// allowed. The built-in defaults are in defaults.go and listed by
// Gate.Rules.
//
// # Walls no rule moves
//
// Reading the sandbox's deny-read paths and writing outside the writable
// roots (or into .git, .agents and other read-only carve-outs) are refused
// whatever the rules, answers, --allow or --yolo say; only starting
// harness with --add-dir widens the writable roots.
//
// # Prompts, headless runs, --yolo
//
// With a Prompter, Ask shows the command, the rule and the choices yes, no,
// always, yes for this session, or a typed reason that is passed to the
// model. "Always" records the narrowest useful pattern covering the
// command — the command and its subcommand or options with * for the
// arguments ("allow bash go test *", "gofmt -w *"), the exact words for
// commands whose arguments are the point (rm, curl, interpreters; see
// narrow.go) — appends it to the project file and applies it at once;
// "session" applies the same pattern until harness exits, saving nothing; when no pattern can cover a request (computed command names,
// parse errors) "always" is not offered. Without a Prompter (harness run)
// Ask becomes a refusal telling the model it is not allowed in
// non-interactive mode and how the user could allow it (--allow 'PATTERN'
// or --yolo). --yolo turns every Ask into Allow; it never lifts a Deny or
// the walls, and never turns the sandbox off. Without a sandbox (backend
// none) no bash command is allowed silently: every one asks unless --yolo.
package permission
