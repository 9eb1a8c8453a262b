package llm

import (
	"context"
	"time"
)

// Request is everything one model call needs. Messages are the stored history;
// Reminder is the per-turn late injection, appended after them by the adapter
// and never stored.
type Request struct {
	Model     string
	System    string
	Tools     []Tool
	Messages  []Message
	Reminder  string
	MaxTokens int

	// Volatile is how many trailing Messages the context layers will
	// rewrite before the next request (a long tool result is stripped once
	// it leaves the latest two messages). Adapters that place cache
	// breakpoints keep the rolling one off them: caching text that is about
	// to change costs a cache write (1.25× on Anthropic) and buys nothing.
	Volatile int

	// Stable is, when the context layers edited the history since the
	// previous request, how many leading Messages the edit left as they
	// were (0: no edit, or none left). Adapters that place cache
	// breakpoints put one at the end of them: the provider's cache still
	// holds that prefix, and a breakpoint only after the edit would not
	// find it (Anthropic looks back 20 blocks from a breakpoint).
	Stable int

	// SessionID keys the provider's prompt cache where the API takes a key
	// (OpenAI's prompt_cache_key).
	SessionID string

	// Thinking is the reasoning setting; the zero value sends nothing, so
	// the model's own default applies.
	Thinking Thinking
}

// Thinking modes (THINKING).
const (
	ThinkingDefault  = ""         // send no thinking parameter
	ThinkingOff      = "off"      // thinking disabled
	ThinkingAdaptive = "adaptive" // the model decides when and how much
	ThinkingBudget   = "budget"   // a fixed budget of Budget tokens
)

// Thinking configures a model's reasoning. Anthropic documents the
// constraints the adapter enforces: a budget of at least 1024 tokens and
// below max_tokens, and no temperature while thinking is on (harness never
// sets one).
type Thinking struct {
	Mode   string // one of the Thinking* modes
	Budget int    // ThinkingBudget: budget_tokens
	Effort string // output_config.effort ("low", "medium", "high", "max"); "" for the default
	// Summarized asks for summarised reasoning text where the API omits it
	// by default (display: "summarized"), so the UI has something to show.
	Summarized bool
	// DropBlock sends thinking.block_binding.prefix_mismatch_behavior
	// "drop_block" (and its beta header): a thinking block whose prefix
	// changed is dropped and reported in Reply.Dropped instead of failing
	// the request. A safety net only: harness keeps history append-only.
	DropBlock bool
}

// MinThinkingBudget is the smallest budget_tokens the Messages API takes.
const MinThinkingBudget = 1024

// EventType tells which field of an Event is set.
type EventType int

// Event types, in the order a stream may produce them.
const (
	EventText     EventType = iota + 1 // Text holds a delta of visible text
	EventThinking                      // Text holds a delta of reasoning
	EventToolCall                      // Block holds one complete tool_use block
	EventRetry                         // the stream failed and is being retried; Err says why, Wait how soon
	EventNotice                        // Text is something the user should know (once), e.g. a field the server rejected; Err its cause
)

// Event is one streamed piece of a reply, for display. The authoritative
// result is the Reply returned when the stream completes.
type Event struct {
	Type  EventType
	Text  string
	Block *Block
	Err   error
	Wait  time.Duration // EventRetry: the pause before the next attempt
	Try   int           // EventRetry: the attempt about to start (2 for the first retry)
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEnd       StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens" // also "length" and model_context_window_exceeded
	StopRefusal   StopReason = "refusal"    // the model declined (Anthropic refusal, OpenAI content_filter or refusal)
	StopOther     StopReason = "other"
)

// Reply is a completed model response.
type Reply struct {
	Message    Message
	StopReason StopReason
	Usage      Usage
	Model      string
	// Dropped lists the reasoning blocks of the request the provider
	// dropped instead of showing them to the model (Anthropic's
	// input_transformations), as "messages.I.content.J: reason".
	Dropped []string
}

// Provider streams one request. onEvent may be nil. A Provider returns a
// Reply only when the whole stream arrived; a cut stream is an error and
// nothing of it is part of the Reply.
type Provider interface {
	Stream(ctx context.Context, req *Request, onEvent func(Event)) (*Reply, error)
	// Name is "anthropic" or "openai", for display and pricing.
	Name() string
}
