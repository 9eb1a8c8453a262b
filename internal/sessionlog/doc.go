// Package sessionlog is the append-only JSONL log of one conversation: every
// message, history edit, permission decision, plan change and usage record,
// one JSON object per line, synced before the agent goes on (a new
// session's file appears with its first message, CreateLazy: what comes
// before is held until then). Replaying a log
// rebuilds the exact history, so a resumed session sends the same request
// bytes and the provider's prefix cache keeps hitting.
//
// A crash can leave at most one torn last line; readers skip it and say so.
// No entry is ever written after a torn line: resuming (Append) cuts it off
// first, and a write that fails part-way (a full disk) is cut off at once;
// each repair is recorded in a notice entry. The entries a failed write
// held back are kept and written, in order, before the next one (or by
// Close), so nothing is dropped while the process lives; Append still
// returns the error, and callers stop the turn as for a message.
// One process writes a log at a time: Create, CreateLazy (at its first
// message) and Append take an flock on the file, and a second writer gets
// a LockedError naming the process that holds it; readers take none. A
// line damaged in the middle (a disk error, an edit by hand) is skipped
// and named with its file and line (DamagedError), never hiding the rest.
// A crash while tools ran leaves tool calls without results: Unanswered
// builds the results that close them on resume, so every tool_use keeps
// its tool_result. Configured API keys are redacted before anything
// reaches the disk. An entry without a time is stamped by the log's clock,
// the caller's (WithClock), so a session opened for a given clock logs it.
//
// Logs live under Root(home)/<ProjectKey(project)>/<start>-<id>.jsonl.
// List, ListAll and Find read them back (newest first, ids by unique
// prefix); Latest is the one used last (its last message or resume
// entry) among those that got a reply (Summary.Started); Summarize condenses one for listing; WriteMarkdown and
// WriteJSONL export one. Entries with Agent set belong to a sub-agent:
// they count toward usage but are never replayed into the main history.
package sessionlog
