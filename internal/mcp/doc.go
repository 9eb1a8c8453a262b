// Package mcp is harness's Model Context Protocol client: it reads server
// definitions in the formats users already have, starts the servers
// inside the session's walls, and gives the model their tools.
//
// # The client
//
// The protocol is harness's own small client on the standard library
// (https://modelcontextprotocol.io/specification): protocol.go has the
// messages it uses (schemas kept as raw JSON, sent to the model as the
// server wrote them); jsonrpc.go the JSON-RPC 2.0 session (answers
// matched by id in any order, the server's ping answered and its other
// requests refused with -32601, as harness declares no client
// capabilities; a line that is not JSON-RPC fails the calls in flight
// and the session goes on); the transports are stdio (one message a
// line), streamable HTTP and the older HTTP+SSE (transport_http.go,
// sse.go). initialize asks for 2025-11-25 and accepts back to
// 2024-11-05. It is not the official Go SDK because every start of the
// binary (harness, and each of the sandbox's re-execs of it: helper,
// launcher, supervisor) pays the init of every linked package: the SDK
// brought github.com/google/jsonschema-go, encoding/gob and
// segmentio/encoding, 12 package inits and 124 KB of init allocations
// per start (885 KB before, 762 KB after), about 60-110 page faults,
// and 1.7 MB of binary. The SDK is still the server the tests check this
// client against (mcptest, over stdio, streamable HTTP in its three
// shapes and HTTP+SSE), beside the reference servers from npm.
//
// # Configuration
//
// Load reads every file of Sources, each in its tool's format (formats.go,
// each format's fields and documentation named there): the user's
// (~/.codex/config.toml, ~/.config/opencode/opencode.json(c),
// ~/.config/crush/crush.json, ~/.gemini/settings.json, VS Code's profile
// mcp.json, ~/.cursor/mcp.json, then harness's own ~/.agents/mcp.json,
// ScopeUser), the project's (.codex/config.toml, opencode.json(c),
// crush.json, .crush.json, .gemini/settings.json, .vscode/mcp.json,
// .cursor/mcp.json, then Claude Code's .mcp.json, ScopeProject), and
// --mcp-config files (ScopeFlag, format guessed from name and keys),
// later ones winning on a name. JSON files may carry comments and
// trailing commas. Every format becomes one Server: command/args/env/cwd
// for stdio, type "http" or "sse" with url/headers for remote servers.
// "disabled": true, "enabled": false (and Gemini's mcp.allowed and
// mcp.excluded, Claude Code's disabledMcpjsonServers for .mcp.json; never
// its enabledMcpjsonServers, which would approve from a file the
// repository writes) make a server Off, listed with why and never started; so
// does a VS Code ${input:ID}, which harness cannot ask for. A field
// harness does not honour is named in Ignored and in a warning with what
// to do instead; a field of the wrong shape skips only its server, with
// an *EntryError naming file, server and field (a --mcp-config file's is
// an error). Each format's variables are rewritten into ${VAR} and
// ${VAR:-default} (VS Code's and Cursor's ${env:NAME}, ${userHome} and
// ${workspaceFolder}, opencode's {env:NAME}, crush's and Gemini's $NAME),
// and Expand replaces them in command, args, env, url, headers and cwd;
// ${CLAUDE_PROJECT_DIR} (and so ${workspaceFolder}) is the project; an
// unset variable without a default is an error, never a literal "${VAR}"
// sent as a credential. A relative cwd is the project's; the session
// refuses a cwd the walls do not let commands read. A project's server
// runs only when Approvals (~/.agents/mcp-approved.json, outside every
// sandbox's writable roots) holds the hash of its definition as it is now
// (cwd included): a changed definition asks again. A session loads through
// LoadWith, whose reader says where each file really is: a user's or
// --mcp-config file that commands can write, of any format, is read as
// ScopeProject; and it sets Server.Pin, the digest of the files a project
// server's command runs, so a rewritten script is a changed definition.
// Add and Remove edit harness's own files for `harness mcp`.
//
// # Servers inside the walls
//
// A stdio server is one sandbox.Cmd with pipes for stdin and stdout
// (Cmd.Stdin), run for the whole session: it writes only the project,
// reads no secrets, reaches the network only through the proxy and the
// net rules, and Close (or its end) kills it with everything it started.
// Its environment is the sandbox's clean one plus its configuration's
// "env", passed over its stdin before the protocol starts, so no value is
// in an argv, the script or a permission prompt. A remote server's client
// connects to its URL's host; any other (a redirect) only by CheckNet.
//
// # Tools
//
// Tool names are mcp__SERVER__TOOL (Claude Code's convention), so
// permission rules name them; every call passes the gate, which asks by
// default; a read-only hint is shown in the prompt and decides nothing but
// what plan mode lets through.
//
// # Modes
//
// A mode is a state of the whole session (mode.go): on a switch into or
// out of plan mode, Follow kills every running stdio server at once (dead
// before its stdin closes, so it cannot write while it shuts down) and
// starts it again under the walls now in force, read-only in plan mode,
// so no server started before the switch writes the project on its own
// or through a tool that claims to be read-only; a call in flight of a
// tool not declared read-only is cancelled; a call waits for its
// server's restart. A remote server cannot be restarted under walls: in
// plan mode the permission gate refuses every MCP tool without
// readOnlyHint, of any server.
// Tools(lazy) gives the model either two tools whose definitions never
// change (mcp_search returns matching tools with their schemas, mcp_call
// calls one), so the request prefix stays byte-stable however many tools
// the servers have and whenever one is first used; or, eager, one
// definition per server tool as listed at start. A tools/list_changed
// notification refreshes the list mcp_search and mcp_call see.
//
// # Prompts, resources, notifications
//
// Prompts lists every server's prompts; the session offers each as the
// slash command /mcp__SERVER__PROMPT and GetPrompt fills it with the
// words typed. Resources lists the listed resources, mentioned in a
// prompt as @SERVER:URI and read with ReadResource. The tools/, prompts/
// and resources/list_changed notifications refresh the lists (the user is
// told). A call carries a progress token when the caller shows live
// output (tools.Progress), and notifications/progress become its lines;
// a call whose context ends is cancelled with notifications/cancelled.
//
// # OAuth
//
// A streamable HTTP server that answers 401 gets the MCP authorization
// flow (auth.go, oauthflow.go; golang.org/x/oauth2 for the token
// exchange and refresh): the 401's protected resource metadata (RFC 9728,
// or its well-known URI), the authorization server's metadata (RFC 8414,
// then OpenID discovery), dynamic registration (RFC 7591) or a
// configured client id, PKCE S256 (a server whose metadata does not
// offer it is refused), the resource indicator (RFC 8707), the user's
// login through a loopback redirect (Options.Login shows the URL; a
// redirect with another state is refused), and the token stored in
// AuthFile, 0600, and refreshed. Without Login and a stored token the
// server does not start and says how to log in. A streamable HTTP
// session the server ended (404 for its id) is started anew, once.
//
// Results are text (binary content described, not inlined) and go into
// the history like any tool result, through the same cap, spill and strip.
// Every failure is a result that says what happened, and the session
// goes on: a server that did not start or stopped (with its exit code and
// the tail of its stderr), a call past CallTimeout (cancelled, and the
// server told), a malformed answer, a message over 16 MiB on any transport
// (limit.go: the official Go SDK's bound for a stdio line; the rest of it
// is read and discarded as it comes, never held, and the server's next
// message is read as usual).
package mcp
