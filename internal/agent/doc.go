// Package agent is the loop: build a request from the stored history, stream
// the model's reply, run the tool calls it asks for, record everything, and
// repeat until a reply asks for no tools.
//
// The loop owns the order of effects that makes sessions durable and cheap:
// a reply is recorded only once it arrived whole; every message and history
// edit is appended to the session log before the next step; the per-turn
// reminder goes at the end of the request and never into history, so the
// provider's cached prefix survives every turn.
package agent
