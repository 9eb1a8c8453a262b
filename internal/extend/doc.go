// Package extend reads the extensions users already have in other agents'
// formats: custom slash commands, hooks, and the permission modes
// (default, acceptEdits, plan).
//
// # Commands
//
// A command is a Markdown prompt file with optional YAML front matter
// (description, argument-hint, allowed-tools, model) in
// <project>/.agents/commands, <project>/.claude/commands, or a Gemini CLI
// .toml (prompt, description) in <project>/.gemini/commands; then the same
// under the home directory. The first of a name wins, so a project
// overrides a personal habit. A subdirectory is a namespace: git/fix.md is
// /git:fix (Gemini CLI's naming); a namespaced .claude command also
// answers to its base name, as Claude Code calls it, where nothing else
// has that name. Claude Code's $ARGUMENTS and $1…$9 are filled (a file
// with neither gets "ARGUMENTS: …" appended); Gemini's {{args}} too (a
// file without it gets the command as typed appended). Project files are
// read through an Opener, the sandbox policy's in a session, as
// instructions and skills are. harness runs neither Claude Code's !`cmd`
// nor Gemini's !{…} shell expansion: a prompt file never runs code on the
// host.
//
// The front matter holds for the turn the command starts (package app,
// Session.StartCommand): model: names the turn's model, when the
// catalogue knows it as one of the session's provider (else the session's
// model, said); allowed-tools: are Claude Code permission patterns
// (ClaudeRules reads them as harness rules: Bash(git add:*) is "bash git
// add *") allowed without asking during that turn, never over a deny rule
// or the walls. From a file out of the agent's reach (the user's own, the
// project's .agents) they apply at once; from one the agent could have
// written (the project's .claude/commands) only once the user approved
// them in the session, and headless not at all, said.
//
// # The slash registry
//
// Registry holds every slash command a session has beyond the front
// end's built-ins, as Sources asked afresh each time: custom commands
// (CommandSource), skills, and whatever else registers (MCP prompts). The
// interactive / menu, Tab completion, /help and "harness run '/name
// args'" all read it, so a new kind of command is one Register call.
//
// # Hooks
//
// Hooks are read in Claude Code's format ("hooks": event → [{matcher,
// hooks: [{type: command, command, timeout}]}]) from the user's
// ~/.agents/settings.json and ~/.claude/settings.json and every --settings
// FILE, and from the project's .agents/settings.json, .claude/settings.json
// and .claude/settings.local.json. The events are PreToolUse, PostToolUse,
// UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd,
// PreCompact (before a summary is written: trigger manual for /compact,
// auto otherwise) and Notification (before a permission prompt); a hook for another event or
// of another type is reported and ignored. A hook reads Claude Code's JSON
// on stdin (session_id, transcript_path, cwd, permission_mode,
// hook_event_name and the event's fields; tool_name in Claude Code's names
// — Bash, Read, Write, Edit, Glob, Grep, Task, TodoWrite, mcp__… — and the
// file tools' path also as file_path), and answers by Claude Code's
// contract: exit 0 is success (JSON on stdout may allow, deny or ask,
// block, add context, or stop; plain stdout is context for UserPromptSubmit
// and SessionStart), exit 2 blocks and its stderr goes to the model (to the
// user for UserPromptSubmit), any other status is an error shown to the
// user while the action goes on. Matching hooks run side by side and an
// identical command once; the timeout defaults to 60 s. Each of a hook's
// stdout and stderr is read up to 64 KiB, the rest dropped as it comes
// and the user told: stdout cut there decides nothing and adds no
// context; a block whose stderr was cut still blocks. A hook's allow
// lets an ask through, its ask makes the gate ask; neither lifts a deny
// rule or the walls.
//
// Settings files are read once, when the session starts, each by
// descriptor through the sandbox policy, and kept: a hook added, changed
// or removed mid-session changes nothing before the next session (/help
// lists the hooks as read).
//
// # Where hooks run, and who may define them
//
// A hook from the user's own files (~/.agents, ~/.claude, --settings) is
// the user's code, written before the session and out of the agent's
// reach (the home directory is read-only inside the walls): it runs on the
// host, as Claude Code runs it, so a hook that notifies, formats or logs
// outside the project keeps working. Whose a file is is decided by where
// it really is, not by the name that reached it: a user's file whose real
// path lies where commands write (walls.Policy.Reachable: the project, an
// --add-dir root, the build cache; a --settings ./x.json, a
// ~/.claude/settings.json that links into the project) is the project's.
// So is a user's hook whose command runs a file commands can write
// (python3 $CLAUDE_PROJECT_DIR/.claude/hooks/x.py). A hook from a project
// file is code the agent could have written — .claude is writable to it,
// and a cloned repository brings its own — so it runs only after the user
// approved it, and it runs inside the walls, through the session's
// sandbox, like a command of the agent's.
//
// An approval is pinned by content (Hook.Key): the file, event, matcher,
// command and timeout, and the digest of every file the command names
// that commands can write (./hooks/pre.sh, bash .agents/x.sh, python3
// tool.py, and the files a $(…) inside it names; not the files it writes
// with >). The files are hashed again at every event: a hook whose script
// changed since the approval is asked about again, and headless does not
// run, with a notice. A yes is remembered in ~/.agents/hooks-approved,
// outside the project (a file that resolves into it approves nothing).
// Headless, --allow-project-hooks approves the hooks and their files as
// they are when the session starts; without it each project hook is
// refused at the start with a notice saying how to approve it, and a
// --settings file whose hooks are the project's stops the session from
// starting. What a hook checked at an event is what runs inside the walls,
// where a swap between the check and the run can do no more than the
// agent could; a host hook runs no file commands can write when checked,
// but the tools it runs may still read the project's configuration
// (a formatter's plugins): a user hook that runs such a tool trusts it.
//
// Command files are read once too. allowed-tools from a command file
// whose real path commands can write (a user's command linked into the
// project, a .agents command linked out of its carve-out) wait for
// approval as a .claude command's do (Commands.Distrust).
//
// # Modes
//
// Modes holds the permission mode. Plan mode makes the project read-only
// in the kernel (walls.Live.SetProjectReadOnly: every command runs
// under the read-only walls and the file tools' writes are refused), and
// each prompt of the turn carries PlanNote; an accepted plan switches to
// default or acceptEdits and rides along with the next prompt.
//
// A mode is a state of the whole session, not only of what starts after
// the switch: Set runs every Follower before it returns when the walls
// narrow or widen, and the session registers what already runs under
// walls of its own (package app): the background and in-flight commands
// (tools.Jobs.Follow: stopped, never frozen), the MCP servers
// (mcp.Manager.Follow: restarted under the new walls), the project hooks
// in flight (Hooks.Follow: stopped) and, through the
// permission gate, every MCP tool not declared read-only (refused in plan
// mode). Sub-agents share the walls and the gate, so their next step has
// the new mode. What the followers did is told to the user at once and
// to the model with the next prompt (TurnContext). In
// acceptEdits mode the file tools' writes need no approval (app passes it
// to the permission gate as an Override, never over a deny).
package extend
