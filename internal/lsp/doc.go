// Package lsp gives every edit the language server's errors: after
// write_file or edit_file, the server of the file's language is told the
// new text and the errors it publishes for that version go back to the
// model in the same tool result, so a broken build is fixed in the same
// step.
//
// # Contract
//
// A Manager runs one session's servers, one per language, each started
// the first time a file of its language is edited and kept warm until
// Close. Which server: the built-in table (Builtin: gopls for Go,
// rust-analyzer, typescript-language-server --stdio, pyright-langserver
// --stdio or else pylsp, clangd), the first candidate found on the
// session's PATH, changed by the LSP setting (ParseSetting: "off", or
// EXT=COMMAND entries that add, replace or, empty, turn off a language).
// Nothing is installed at run time.
//
// A server runs inside the session's sandbox like any command
// (sandbox.Cmd with its stdin and stdout as pipes), in the project, with
// the walls' environment (the per-project cache as XDG_CACHE_HOME and
// the Go caches) and no network at all, whatever the rules allow
// (sandbox.Cmd.NoNet: a server fetching modules is refused). It is never run
// on the host: the caller builds no Manager without a sandbox. Close
// asks each server to shut down, then kills it with all it started;
// Follow(true), a switch into plan mode, does the same to the servers
// running under the writable walls (the next edit starts them again).
//
// Diagnose(path, text) sends didOpen (first time) or didChange (full
// text, the next version), then didSave, and waits for
// textDocument/publishDiagnostics of that file for that version or later
// (a server that sends no version: any publish after the change), then
// DefaultSettle (300 ms) with no further publish, for servers that
// publish in steps. It returns within Options.Wait (DefaultWait, 3 s) of
// the call, plus Options.StartWait (DefaultStartWait, 15 s) on the call
// that starts the language's server; if nothing fresh came by then the
// edit gets nothing, never an older version's errors. The result lists
// the file's errors, up to Options.Warnings warnings (0 by default),
// and other files' errors published meanwhile (at most 10 lines), each
// as file:line:col: severity: message (line and column 1-based, the
// column in bytes), capped at Options.MaxBytes (DefaultMaxBytes, 4 KiB).
//
// A language without a server on PATH, a server that will not start and
// one that dies are each said once through Options.Notify; that language
// then gets no diagnostics for the session, and no edit waits for it.
//
// What a server sends is bounded: a message over 16 MiB, a header over
// 4 KiB or anything else that is not LSP's framing stops the server (said
// once); at most 500 diagnostics are kept per file.
// The server's requests are answered (configuration with nulls, so it
// uses its defaults; registrations and progress accepted; anything else
// MethodNotFound) off the read loop.
//
// No Go module for LSP's types is among those this build may use
// (go.lsp.dev/protocol is not; golang.org/x/tools keeps gopls's protocol
// package internal), so the subset used is written out in protocol.go.
package lsp
