// Package history holds the stored conversation of one session and the three
// cheap context layers that keep it small: cap, strip and drop. (The fourth,
// the handoff summary, is package compact; it returns an Edit applied here.)
//
//   - Cap rewrites a fresh tool result over Config.Cap chars before it is
//     stored: head and tail stay inline (errors come last, so the tail is the
//     larger part), the whole text goes to a spill file in Config.SpillDir,
//     and a marker says how to page it and that Sweep deletes it when the
//     user's turn ends. A new message costs the prompt cache nothing.
//   - Strip turns old tool results into Config.Stub-char stubs: at EndTurn,
//     and inside a long autonomous turn in batches (see Maintain), because
//     the prompt cache, not the token count, decides the bill: rewriting one
//     message per step rewrites the cache every step, rewriting many at once
//     breaks it once.
//     The shipped strategy stubs a result only when the stub saves at least
//     40% of it: a smaller saving hides output for next to nothing. It
//     also stubs old tool-call inputs, but only the bodies they wrote (a
//     `cat > f <<EOF` here-document, write_file's content) of 200 chars
//     or more, and only while the file holds exactly that body, checked
//     by hash through Config.Disk: a body whose file has changed since
//     keeps its text, so a stub never hides what is not on disk. It folds
//     a repeat of the harness's own feedback on a malformed reply (blocks
//     marked LayerFeedback where they are written) to a reference to the
//     first copy, which is never folded, stubbed or dropped; a compaction
//     that cuts the first copy gives the next its text back. With
//     Config.TrimText (off by default) it cuts old assistant text over
//     900 chars to about 500, never the answer that ended a user's turn.
//     Each block is rewritten at most once. An old image (a user's image
//     block or a tool result's image) is always stubbed to a line naming
//     it, since it costs up to thousands of tokens every time it is sent.
//   - Drop empties the oldest tool results when the count is over
//     CompactAt × Window, enough at once to get well under it.
//
// Which layer last rewrote a block is recorded in llm.Block.Layer, never
// guessed from the text, so a tool output that merely contains a marker or a
// <summary> tag cannot fool the layers, and a capped result can still be
// stripped. The summary message and everything before it are never touched.
//
// Every change to stored messages is returned as an Edit; the agent appends
// it to the session log and replays it with Apply on resume, so a resumed
// session rebuilds the same request bytes. Messages returned by Messages are
// never mutated afterwards (layers copy a message before rewriting it).
//
// How and when the layers run is a Strategy's choice, asked through its
// Layers, never its name: Harness (the default) and Append ship here; the
// context benchmark's references (the seed harness, raw) are package
// replay's.
//
// The append strategy (Append) is the contract for models that check
// what they are sent (preserved thinking, DeepSeek): every edit removes the
// reasoning of the assistant messages after it (Edit.Unthink), so no
// thinking block is ever sent with a changed prefix, and an edit inside a
// turn also closes the open tool round (Edit.Close: the last call and its
// output restated as text in the user message), so the latest assistant
// message needs no thinking. At the start of a user turn a count over the
// budget is dropped in one batch and old output stripped. Inside a turn the
// strip runs when it pays for the cache it rewrites (stripPays): the tokens
// it saves times the requests left in the turn (as many as it has had, at
// least 20) against the cached tokens from its first edited message on,
// times Config.RewriteCost ((cache write − cache read) / cache read: 11.5
// on Anthropic, 9 on OpenAI and DeepSeek). A strip of the output that just
// left the latest round rewrites almost nothing and runs at once; early in
// a turn, and when little is strippable, output waits for one batch. The
// request after an edit carries llm.Request.Stable, a cache breakpoint at
// the end of what the edit kept. Measured on the 100 shared trajectories
// (harness bench context, Anthropic, 128k): 0.736 of raw (0.933 with edits
// at a turn's start only; harness 0.711, seed 0.778), 1.041× the seed's
// visible output, 94.0% cache reads; with 500 reasoning tokens a step sent
// back 0.747, the cheapest strategy. Stubs of failed results keep the head
// and the tail (the error and the exit code). After a provider's context
// error the agent lowers the working window (SetWindow, ObservePrompt) and,
// when dropping and compacting leave the latest output itself too big,
// Squeeze cuts it to fit.
//
// Window is the model's; Config.Reserve (the session's MAX_TOKENS, at most
// half the window) is kept free for the reply, because Anthropic with
// thinking on and DeepSeek count max_tokens against the window with the
// prompt. Every threshold above is a share of the working window, Window −
// Reserve; ReplyRoom tells the agent what a request's max_tokens may take
// when the limit is larger than the reserve.
//
// Token accounting: the provider's usage for the last request is the truth;
// only what changed since is estimated (Estimate, about 4 chars a token).
package history
