// Package replay measures the context layers on recorded sessions: it
// replays trajectories through the real history, compact and reminder code
// and an ideal prefix-cache simulator, and reports per strategy what was sent,
// what the cache served and what it cost (harness bench context). With
// Options.Decompose it also splits each strategy's cost by cache tier and by
// content (Decomposition), and Floor costs the minimal request sequence
// through the same simulator, so a change is judged against what is left.
//
// The input strip asks a simulated disk (simDisk) whether a written body
// is still on disk: a file holds what the trajectory's last whole-file
// write put there until a later command names it other than to read it.
// mini-swe-agent's format-error messages load as the harness's feedback
// (history.LayerFeedback), within the turn.
//
// The reference strategies (Seed, Raw) are defined here, beside the replay
// that measures them, as history.Strategy values: history runs them with
// no branch of its own.
//
// No model is called. The assistant messages are the recorded ones, so the
// strategies differ only in what they send; a compaction's summary is
// synthesised deterministically from the history (a fixed-size note) and
// costed like a real summarisation call, input and output.
//
// Besides history's strategies, StrategyServer models Anthropic's
// server-side context management on the append-only contract: the
// client sends its whole history and the provider clears old tool results
// in batches (serverClearing); Options.ThinkingTokens and OldThinking
// model preserved thinking, kept or cleared, for every strategy alike.
//
// Token counts in the replay are computed from text at the chars-per-token
// ratio measured on the trajectories' own usage (Tokens); history's
// estimator sees these as the provider's usage, as it would in a session.
//
// The cache simulator is ideal (no expiry, no eviction) and works at block
// granularity. Anthropic: breakpoints where the harness's adapter puts them
// (last tool, system, the last stored block, and the end of the previous
// turn when that is 20 or more blocks back; at most 4), a 20-block look-back
// per breakpoint, a 1,024-token minimum, writes at 1.25× and reads at 0.1×.
// OpenAI: automatic, the longest prefix shared with any earlier request,
// from 1,024 tokens in 128-token steps, reads at 0.1×, no write premium.
package replay
