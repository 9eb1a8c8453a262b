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
package compact
