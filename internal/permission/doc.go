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
// (X could be --pre). The strictest part of a command decides: deny >
// ask > allow; Decision.Parts lists every part and what decided it.
//
// # A write is a write
//
// Every write a command makes is decided like write_file on that path:
// redirections (>, >>, >|, &>, &>>, <>, exec's, here-documents into
// files) and the output options and operands of tools (tee, sort -o, uniq
// OUT, time -o, tree -o, file -C, find -fprint/-fprintf/-fls, dd of=,
// sed -i and w, git --output, base64 -o). So the write rules apply ("allow
// write src/**" covers "echo x > src/x"), a write no rule covers asks, and
// one outside the walls is denied. /dev/null, /dev/stdout, /dev/stderr
// and the sandbox's private /tmp are free (a path through a symlink in
// /tmp asks: it may point anywhere). Commands whose whole job is writing
// (rm, cp, mv, touch, mkdir, chmod...) meet the walls for their targets
// and their own bash rule for the rest. Which option writes or runs what
// is modelled once per tool, from its option grammar (options.go): short
// options bundled or with attached values, --opt=value and --opt value,
// and the unique prefixes getopt_long and git accept; a word computed at
// run time in an option's place asks.
//
// Test runners and build tools (runners.go: go, make, pytest, python -m
// unittest, npm/pnpm/yarn, cargo, mvn, gradle, dotnet, rspec, and through
// bundle exec, uv run, poetry run, npx...) run the project's code, but
// every option naming a program, shell, preload or config that can name
// one asks, as does one naming a directory or file of code or config
// outside the project, or a runner started in the private /tmp; their
// output options are writes; the variables they read as flags or
// programs (GOFLAGS, PYTEST_ADDOPTS, NODE_OPTIONS, npm_config_*,
// RUSTC_WRAPPER, MAKEFLAGS...) ask, and PYTHONPATH-like lists pass only
// inside the project. env -S STRING is split as env splits it and read
// as the command it is.
//
// Read-only tools stay read-only option by option: rg --pre and
// --hostname-bin, go vet -vettool/-toolexec, sort --compress-program,
// find -exec/-ok (their command is checked), sed's e command and s///e,
// man -P/-H and less +CMD/-k ask (less -o writes) even where a rule allows
// the pager; sed is allowed when its script (parsed: addresses, s and y with any
// delimiter, a/i/c text, labels) only prints.
//
// # Evaluation contexts are commands
//
// Bash evaluates text as arithmetic in $(( )), (( )), let, for (( )),
// [[ a -eq b ]] and the other arithmetic tests, array subscripts,
// ${x:off:len} and declare -i values, and a subscript in a name it
// assigns (printf -v, read, read -a, mapfile, getopts, unset, declare,
// [[ -v ]], test -v); evaluation runs the command substitutions a quoted
// 'a[$(touch x)]' contains. Such text is allowed only when it has no $ or
// backquote and names no variable set at run time (from a command's
// output, read, a loop over computed words, a positional parameter);
// otherwise it asks. ${x@P} and ${!x} of such a variable ask too.
//
// # Git is read-only only with a protected repository
//
// git runs programs its repository's config names (fsmonitor, pagers,
// diff drivers, filters). A git command whose repository — found as git
// finds it, from the tracked directory, -C and --git-dir — is not one the
// sandbox has kept read-only since the session started (Policy.ReadOnly)
// and is inside a writable root or the private /tmp asks; so do
// --work-tree, GIT_DIR=, -c with a key that may name a program (only keys
// known to name none pass), --ext-diff and --textconv. git branch is
// allowed only for listing.
//
// # The walls are the sandbox's
//
// Whether a path may be read or written at all is the sandbox Policy's
// decision (CheckRead, CheckWrite), so the gate refuses exactly the paths
// the kernel walls refuse: secrets, .git and .agents carve-outs
// (including ones that do not exist yet), /proc magic links, everything
// outside the writable roots. Relative paths are resolved against the
// tracked cd, "../" lexically and symlinks by the policy.
//
// # Rules
//
// Rules live in two files with the same format: the user's
// (~/.agents/permissions) and the project's (<project>/.agents/permissions,
// inside a sandbox carve-out, so the agent cannot grant itself anything).
// They are read once, when the gate is built (Options.ReadFile: a
// session reads each by descriptor and refuses, headless, one whose real
// path commands can write).
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
// # Network rules
//
// The same files hold rules for the sandbox's network proxy:
//
//	allow net *.example.com        any name below example.com, ports 443 and 80
//	allow net db.internal:5432     one host and port (private addresses need this form)
//	allow net @go                  a shipped preset: @go, @npm, @pypi, @crates
//	allow net @lockfiles           the registries the project's lockfiles name (lockfiles.go)
//	deny  net tracker.example.com
//
// HOST is a name, *.suffix, * or an IP address, which only a rule naming
// it matches; PORT is a number or *, and without one the rule covers 443
// and 80. Gate.CheckNet decides a connection with the same specificity
// and layering as other rules; nothing matched asks, and the connection
// waits for the answer. "Always" saves "allow net HOST" (HOST:PORT off
// the web ports) in the project file. Headless, an ask is refused with a
// message naming --allow-net HOST (Options.AllowNet). The verdict says
// whether the rule names host and port exactly: only such a rule, never
// an answer to a prompt, lets the proxy reach a loopback, private or
// link-local address.
//
// # Plan mode
//
// While the walls hold the project read-only (plan mode,
// walls.Policy.ProjectReadOnly), an MCP tool that does not declare itself
// read-only (Request.DeclaredReadOnly, from its readOnlyHint) is denied:
// it runs in its server's process, which the walls of the moment may not
// hold. The denial is checked again after a prompt (the mode may have
// changed meanwhile), and no rule, hook, answer or --yolo lifts it.
//
// # Walls no rule moves
//
// What the sandbox Policy refuses to let be read or written is refused
// whatever the rules, answers, --allow or --yolo say; only starting
// harness with --add-dir widens the writable roots.
//
// # Prompts, headless runs, --yolo
//
// With a Prompter, Ask shows the command, the rule and the choices yes, no,
// always, yes for this session, or a typed reason that is passed to the
// model. "Always" records the narrowest useful pattern covering the
// command — a module an interpreter runs ("python3 -m mypy *"), the
// command and its subcommand (a group's second one: "npm
// run build"), or its leading options when it has none, with * for the
// arguments ("allow bash go test *", "git commit *", "gofmt -w *"), the
// exact words for
// commands whose arguments are the point (rm, curl, interpreters; see
// narrow.go) — appends it to the project file and applies it at once;
// "session" applies the same pattern until harness exits, saving nothing; when no pattern can cover a request (computed command names,
// parse errors) "always" is not offered. Without a Prompter (harness run)
// Ask becomes a refusal telling the model it is not allowed in
// non-interactive mode and how the user could allow it (--allow 'PATTERN'
// or --yolo; for a write, --allow 'write PATH'); its Record (Answer
// AnswerHeadless) carries that message and the rules that would admit it. --yolo turns every Ask into Allow; it never lifts a Deny or
// the walls, and never turns the sandbox off. Without a sandbox (backend
// none) no bash command is allowed silently: every one asks unless --yolo.
package permission
