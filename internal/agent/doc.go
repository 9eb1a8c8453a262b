// Package agent is the loop: build a request from the stored history, stream
// the model's reply, run the tool calls it asks for, record everything, and
// repeat until a reply asks for no tools.
//
// The loop owns the order of effects that makes sessions durable and cheap:
// a reply is recorded only once it arrived whole; every message and history
// edit is appended to the session log before the next step; the per-turn
// reminder goes at the end of the request and never into history, so the
// provider's cached prefix survives every turn — except under the
// append-only contract (Options.AppendOnly: preserved-thinking models,
// DeepSeek), where nothing already sent may change: assistant turns go back
// as received, the tools are built once, and the reminder is a persisted
// delta stored at the end of the user's message. A reminder is committed
// only when the request carrying it is sent, so building one (/context)
// has no effect.
//
// A provider's "context too long" is always recoverable: the loop learns
// the real limit from the error (or the failing size), lowers the working
// window and says so once, drops, compacts with a request that fits, cuts
// the latest output if it alone is too big, and retries. A failed
// compaction backs off instead of repeating every step. Reasoning blocks the
// provider reports dropped (drop_block) are logged and shown. A log write
// that fails stops the turn (the log keeps the entry for its next write), so
// a resume never rebuilds different bytes. What the user is told beside the
// conversation reaches the Observer as typed notices (package notice).
//
// Two replies are not taken at their word. One cut by the output limit in
// the middle of a tool call runs none of its calls: each gets a result
// saying the reply was cut at N tokens and how to split the work, and a
// second cut in a turn raises the limit once, within the model's maximum
// in the catalogue. A refusal is shown with the model's explanation and
// stored as a placeholder, so it does not steer later requests.
package agent
