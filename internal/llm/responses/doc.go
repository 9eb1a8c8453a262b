// Package responses is the llm.Provider for OpenAI's Responses API
// (POST /v1/responses), the format OpenAI's reasoning models keep their
// reasoning across tool calls in and the only one Codex speaks. Like the
// other adapters it is written over net/http and the shared SSE reader.
// Harness uses it when WIRE_API=responses, the default for OpenAI's own
// endpoint with a reasoning model (see internal/app).
//
// Contract:
//   - Stateless by default: store is false, so the server keeps nothing,
//     and for reasoning models include asks for
//     "reasoning.encrypted_content". Each reasoning item is stored in its
//     thinking block (llm.Block.Item) exactly as received and sent back
//     verbatim, right before the item that followed it; that item (the
//     assistant message or function_call) goes back under its own id, as
//     the API pairs the two by id. When the context layers remove the
//     reasoning of a message, its other items go back without ids, which
//     the API then takes as new. With Config.Store (RESPONSES_STORE=on)
//     the server keeps the items and nothing encrypted is asked for.
//   - Function calls go back as function_call items with their call_id,
//     their results as function_call_output items right after them; the
//     system prompt is instructions; the reminder is a final user message.
//   - reasoning.effort is EFFORT (max is sent as xhigh) and
//     reasoning.summary is "auto", for reasoning models only (a model
//     without reasoning answers 400 to either). prompt_cache_key is the
//     session id. A 400 naming one of these settings (an organisation not
//     verified for summaries) drops it for the session with one
//     llm.EventNotice.
//   - A reasoning item the server cannot verify (400 "The encrypted
//     content for item rs_… could not be verified": it was encrypted for
//     another organisation or Azure resource, as in a session resumed with
//     another key) makes the provider send back, from then on, only the
//     reasoning items it received itself; it retries at once and says so
//     in one llm.EventNotice.
//   - For a given llm.Request the body is always the same bytes (fixed
//     field order, tools in order, input last).
//   - Streams: output_text, refusal, reasoning_summary_text and
//     reasoning_text deltas are shown as they come; output_item.done items
//     are the authority for the reply; the stream is complete only at
//     response.completed or response.incomplete (max_output_tokens is
//     StopMaxTokens, content_filter StopRefusal). response.failed and
//     error events are classified errors (context_length_exceeded is
//     ErrContextTooLong, server_error retryable); anything else that ends
//     the stream is a cut stream. Whole responses (Config.NoStream, or a
//     server answering JSON) decode the same way.
//   - Usage: input_tokens less input_tokens_details.cached_tokens is
//     Usage.Input, the cached part CacheRead; output_tokens_details.
//     reasoning_tokens is Usage.Reasoning, a share of Output.
//   - Azure: a base URL on an Azure OpenAI host (…/openai/v1, or …/openai
//     with ?api-version=) gets /responses added with its query kept, and
//     the key is sent in api-key as Azure documents it.
//   - Failures are *llm.Error values; the API key never appears in them.
//
// Sources: OpenAI's Responses API reference (streaming events, the
// ResponseReasoningItem whose encrypted_content is "populated when a
// response is generated with reasoning.encrypted_content in the include
// parameter"; reasoning.summary "auto"); openai/codex (its wire_api
// setting, and its Azure handling: PR #3528, issue #37275); other
// clients' bug reports for the API's pairing errors: continuedev/continue
// #8933 and #12620, vercel/ai #7099 (item ids must go back with the
// reasoning item) and #8031, openai/openai-node #1567, anomalyco/opencode
// #16717; openai/codex #3528 (Azure and item ids) and #3573, and
// lidge-jun/opencodex #5583 (encrypted content from another resource);
// NousResearch/hermes-agent #63446 (Azure needs the reasoning item's id);
// Microsoft Learn, "Azure OpenAI Responses API" (v1 endpoint,
// api-key header); recorded real streams in llmtest/testdata/responses
// (charmbracelet/fantasy, Apache-2.0).
package responses
