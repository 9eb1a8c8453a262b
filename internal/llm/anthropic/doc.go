// Package anthropic is the llm.Provider for Anthropic's Messages API, written
// over net/http and SSE rather than an SDK so harness controls the request
// bytes and the cache breakpoints.
//
// Contract:
//   - The body for a given llm.Request is always the same bytes (structs with
//     a fixed field order, tools in the given order, messages last), so the
//     provider's prefix cache hits turn after turn.
//   - cache_control breakpoints go on the last tool, the system block and the
//     last stored block (the end of Request.Messages), plus one on the end of
//     the previous user turn when the blocks since then would exceed the
//     API's 20-block look-back; never more than 4.
//   - Request.Reminder is sent as a last text block after the final
//     breakpoint, so it never enters the cached prefix.
//   - Usage: output_tokens_details.thinking_tokens, where the model reports
//     it, is Usage.Reasoning, the share of Output spent thinking.
//   - Failures are *llm.Error values; the API key never appears in them.
package anthropic
