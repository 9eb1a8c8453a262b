// Package mcp is harness's Model Context Protocol client: it reads server
// definitions in the formats users already have, starts the servers
// inside the session's walls, and gives the model their tools.
//
// # The client
//
// The protocol is the official Go SDK's client
// (github.com/modelcontextprotocol/go-sdk/mcp; capabilities.go, client.go):
// one sdk.Client and ClientSession per server, over the SDK's transports:
// IOTransport on the pipes of a stdio server that runs inside the walls
// (stdio.go), StreamableClientTransport and SSEClientTransport with
// harness's own http.Client (its headers, CheckNet for any other host,
// and for streamable HTTP the OAuth RoundTripper of auth.go). The SDK
// asks for its newest protocol revision (2026-07-28: server/discover,
// then initialize at 2025-11-25 for a server that does not know it) and
// accepts back to 2024-11-05; it answers the server's ping, sends
// notifications/cancelled when a call's context ends, pages lists, and
// resumes a broken event stream. harness declares exactly what it
// implements: roots (when the session has a project), elicitation in
// form mode when Options.Elicit is set and sampling (without tools) when
// Options.Sample is set (elicit.go, sample.go): a session always sets
// both and answers at once when no one can be asked, so a server never
// waits for an answer that will not come. Schemas are kept as the SDK decodes them
// and encoded once when listed, so the model sees the same bytes on
// every request.
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
// Begin is Start that returns at once, each server starting beside the
// caller (the chat's prompt is usable meanwhile) and done told as each
// start ends; PauseStarts stops the start clocks while the user answers
// a question (a network one a start raised). A stdio server's command
// carries its definition as its Label, so such a question names the
// server's own command, not the script that wraps it.
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
// prompt as @SERVER:URI and read with ReadResource; the model lists and
// reads them with mcp_read_resource {server, uri} (resources.go), offered
// when a server the session started with offers resources; a read passes
// the gate as mcp__SERVER__@resource, so a rule naming the server covers
// it. The tools/, prompts/ and resources/list_changed notifications
// refresh the lists (the user is told). A call carries a progress token
// when the caller shows live output (tools.Progress), and
// notifications/progress become its lines. What a server logs
// (notifications/message, at info and above: the level is set per request
// on the newest revision, by logging/setLevel on older ones) goes to
// Options.Log, the session's log, not the screen.
//
// # Client capabilities
//
// Roots are the sandbox policy's writable roots (the project, then every
// --add-dir), as file:// URIs, fixed for the session (no list_changed):
// the reference filesystem server started without directories works on
// them. An image in a tool result reaches a model that takes images
// (Options.Images) as the result's image (llm.PrepareImage, within every
// provider's limits; one per result, others described; a PNG whose
// ancillary chunk has a bad checksum is shown without that chunk); for
// other models, and for audio, which no provider adapter takes, it is
// described in words. Instructions (the server's InitializeResult) are
// offered to the system prompt, each server's within
// InstructionsPerServer (2 KiB) and all within InstructionsTotal (8 KiB),
// cut with a note that says so; the session reads them once at its start
// (app's buildAgent, agent.PromptInfo.MCPInstructions), so the prompt
// stays byte-stable for the cache.
//
// Elicitation (elicitation/create, form mode; on the newest revision it
// rides in a call's result, SEP-2322, and the SDK answers it through the
// same handler) becomes an Elicitation: the server's message (cut at 4
// KiB) and its flat schema's fields, the required ones first in the
// order "required" lists them, then the others by name (a JSON object's
// order does not survive the SDK's decoding): string (with its format,
// length bounds, and an enum from enum/enumNames or oneOf's const and
// title), number and integer (with bounds), boolean, and a multi-select
// list of enum values; each with the schema's default. A schema of other
// types, or of more than 32 fields, is an error to the server and the
// user is told. Options.Elicit answers accept (with content), decline or
// cancel; Field.Parse turns what a person typed into the value; on
// accept the SDK checks the content against the schema and fills in the
// defaults of fields left out (SEP-1034). A URL-mode request is declined:
// harness declares form mode only and opens no browser for a server.
//
// Sampling (sampling/createMessage) becomes a Sampling: text messages
// and the system prompt (a request with tools or tool results, images or
// audio is an error that says so; harness declares sampling without
// tools), maxTokens capped at MaxSampleTokens (4096), at most 256 KiB of
// text. Options.Sample sends it to the session's model once allowed; a
// refusal (ErrSampleRejected) reaches the server as the spec's code -1.
//
// # OAuth
//
// A streamable HTTP server that answers 401 gets the MCP authorization
// flow, and the flow is the Go SDK's client: one
// auth.AuthorizationCodeHandler per login (oauthflow.go). It finds the
// protected resource metadata (RFC 9728: the 401's resource_metadata,
// then the well-known URIs) or falls back as the 2025-03-26 revision says
// (the server's origin is the authorization server; with no metadata
// there, RFC 8414 or OpenID discovery, its /authorize, /token and
// /register); it picks the client in the spec's order (a configured
// clientId, else the user's Client ID Metadata Document, oauth's
// clientMetadataUrl, where the authorization server supports those, else
// dynamic registration, RFC 7591, as a native client); it refuses a
// server whose metadata offers no PKCE, asks with S256 and the resource
// indicator (RFC 8707), and refuses a redirect whose iss is not the
// issuer or is there unadvertised (RFC 9207, SEP-2468). harness's layers
// stay around it (auth.go): a RoundTripper under the SDK's transport that
// sends the token and on a 401 or a 403 insufficient_scope runs one login
// at a time and sends the request again; the loopback listener the
// user's browser comes back to (the handler's AuthorizationCodeFetcher;
// Options.Login shows the URL; a redirect with another state is refused
// there); the net rules' HTTP client; the token stored in AuthFile, 0600,
// and refreshed (golang.org/x/oauth2), with the scopes it got, which a
// later login asks for again (step-up, SEP-2350). A failed login is not
// asked again within one start. Without Login and a stored token the
// server does not start and says how to log in. A streamable HTTP
// session the server ended (404 for its id, sdk.ErrSessionMissing) is
// started anew, once.
//
// Results are text (binary content described, not inlined, but for the
// image above) and go into the history like any tool result, through the
// same cap, spill and strip. Every failure is a result that says what
// happened, and the session goes on: a server that did not start or
// stopped (with its exit code and the tail of its stderr), a call past
// CallTimeout (cancelled, and the server told), a malformed message or
// one over 16 MiB on a stdio server's stdout (limit.go: the SDK's bound,
// given as IOTransport.MaxLineLength and MaxEventSize; the SDK reads no
// further, ends that server's session, and harness stops the server and
// says why; its other servers go on).
package mcp
