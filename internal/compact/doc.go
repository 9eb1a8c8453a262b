// Package compact writes the fourth context layer: a handoff summary that
// replaces old history when the token count passes CompactAt × Window.
//
// The summarisation request is the agent's next request unchanged (system
// prompt, tools, messages, model, session id) with the instruction as one
// more user message, so the provider reads the whole history from its
// prefix cache instead of billing it again; the reference harness used a
// different system prompt and paid for everything in full. The result is a
// history.Edit: the summary (Goal / What happened / Files / State / Next),
// then the most recent messages worth about CompactTo × Window, never
// separating a tool call from its result. The agent applies and logs it.
//
// The request is made to fit the session's working window (lowered after a
// provider's context error): the whole history, else only the part being
// replaced, else — or when the provider still refuses it as too long — the
// part being replaced summarised in chunks, each its own request well
// inside the window. The user's own messages in the part replaced are quoted
// verbatim in the summary block by harness (<user_messages>), carried from
// one compaction to the next. Under the append strategy the edit also
// removes the reasoning of the kept messages, whose prefix it changed.
package compact
