// Package app assembles one session: everything a conversation runs on
// (configuration, sandbox policy and backend, session log, permission
// gate, tools, provider, history, agent), wired together by Open from
// small named steps, each in its own function (TestStepsInOrder runs them
// one at a time and checks what each adds). Both front ends (the
// interactive chat and headless run) open their session here, so they
// cannot drift; package cli only parses flags and renders.
//
// Open reads no setting from the process: the environment, the home and
// cache directories, the working directory and the clock come in Options,
// so a test opens a session for any user and any time. What it finds on
// the machine is the machine's: the sandbox looks for bwrap on the
// process's PATH and makes its private directory under the process's
// temporary directory. A step that fails undoes the ones before it (the
// sandbox is closed, the log closed).
//
// The MCP servers start before Open returns, except with
// MCPInBackground (the chat): they start beside the session, the lazy
// tools wait for the server a call names (cancelled with the call),
// WatchMCP tells the front end how each start ended, and a permission
// prompt stops the start clocks while it waits.
//
// Every session answers its MCP servers' questions and sampling requests
// (mcpask.go). A question (elicitation) goes to Options.Elicit, the
// chat's form; without one (harness run, ACP) it is declined at once and
// a notice says so. A sampling request passes the gate as
// mcp__SERVER__@sampling (SamplingTool), so the chat asks, a rule or
// --yolo allows it, and a headless run without one refuses it naming the
// --allow to add; it is sent with the session's provider and model,
// within the server's maxTokens (capped), and its usage goes into the
// session's total, the log (TypeUsage under "mcp SERVER sampling") and
// the cost ledger (ledger.PurposeSampling). Plan mode changes neither:
// a question or a completion writes nothing, and the gate still asks
// about sampling. A project's server that was not approved never started,
// so it asks nothing.
//
// What the session records beside the conversation (permission decisions,
// network connections, tool notices, the reminder's state) does not stop
// a turn when the log cannot take it: the front end gets a LogFailed
// notice (SetNotify) saying what was not recorded and why, and the log
// keeps the entry for its next write. If the disk still refuses then, the
// agent's next append stops the turn, as for a message
// (logfailed_linux_test.go).
package app
