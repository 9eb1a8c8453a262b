// Package acp is harness's agent for the Agent Client Protocol (ACP,
// protocol version 1): an editor (Zed, JetBrains, Neovim…) starts
// `harness acp` and speaks newline-delimited JSON-RPC 2.0 on its stdin
// and stdout. The messages follow the official schema: schema/v1/schema.json
// and the generated types of @agentclientprotocol/sdk 2.4.0 (npm; source
// github.com/agentclientprotocol/typescript-sdk, spec at
// agentclientprotocol.com/protocol/v1). No Go SDK is among the modules
// available to this build, so the subset harness uses is written out in
// types.go.
//
// Server answers initialize (loadSession, image and embedded-resource
// prompts, http and sse MCP servers), session/new, session/load,
// session/prompt, session/cancel and session/set_mode. It builds each
// session through Server.Open, which package cli points at app.Open as
// harness run does, with the project found from the cwd the client sends
// (never the process's directory) and the client's MCP servers added as an
// --mcp-config file adds them (MCPConfig): they start through app's path,
// inside the walls, like the user's own.
//
// A turn streams as session/update notifications: agent_message_chunk and
// agent_thought_chunk from the model's stream; each tool call as a
// tool_call (kind, title, rawInput, absolute locations, status pending),
// then tool_call_update in_progress and completed or failed with the
// result as content; an edit (edit_file, write_file) carries diff content
// {path, oldText, newText} read from the disk before and after the call,
// which harness's own file tool made (checkpointed, so harness undo covers
// it); its text content is the tool's result, which after an edit carries
// the language server's errors (package lsp). write_todos becomes a plan
// update; the slash commands (harness's own /compact and /undo, reserved
// over custom ones, then custom commands, skills, MCP prompts) are
// published with available_commands_update once the session's answer is
// written; /compact and /undo run here as in the chat, their output the
// turn's agent text. A resource_link to a file, and an @path in the
// prompt's text, attach the file's content as the chat's @path does
// (inside the project, read through the policy, at most 100 KiB). The
// prompt answers end_turn, cancelled, max_tokens, max_turn_requests or
// refusal.
//
// What the permission gate would ask the user becomes
// session/request_permission about the open tool call, with allow_once,
// allow_always (harness's session rule, offered when the gate has a
// pattern to record), reject_once and reject_always (remembered here for
// the session). A reject refuses the call and ends the turn (end_turn);
// the request waits on the turn's context, so a client that never answers
// cannot hang a cancel.
//
// session/cancel cancels the turn's context: the agent kills the
// sandboxed command in flight, open tool calls are closed as failed, and
// the prompt answers cancelled; the session takes the next prompt.
// session/load closes the session if it is open here, resumes it from its
// log (as --resume does, continuing the same log) and replays the
// conversation as user_message_chunk, agent_message_chunk,
// agent_thought_chunk, tool_call and tool_call_update notifications before
// it answers. The modes are harness's permission modes (default,
// acceptEdits, plan), switched with extend.Modes.Set, which moves the
// walls of what is already running too.
//
// harness keeps its walls: commands run in its sandbox, never in the
// editor's terminal; the ACP process itself does not enter the sandbox;
// stdout carries the protocol alone (notices and errors go to Server.Log,
// stderr). When the input ends, every session is closed with its
// commands, jobs and MCP servers.
package acp
