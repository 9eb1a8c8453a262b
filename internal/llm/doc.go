// Package llm is the provider-neutral vocabulary of harness: messages made of
// blocks, tool definitions, requests, streamed events, usage and typed errors.
//
// Provider adapters (llm/anthropic, llm/openai for Chat Completions,
// llm/responses for OpenAI's Responses API) translate a Request into their
// wire format and their stream back into Events. The translation must be
// byte-stable: the same Request always yields the same body, so a provider's
// prefix cache keeps hitting turn after turn. Nothing here talks to the network.
//
// The model catalogue (catalogue.json, embedded; LookupModel) holds each
// known model's window, longest reply, list price, whether it reasons and
// whether it takes images,
// matched by exact name, dated snapshot or declared family, never by bare
// prefix. A missing price is unknown, not zero.
//
// Images (a BlockImage in a user message, or Block.Image on a tool result)
// are prepared once by PrepareImage, within every provider's limits, and
// encoded once, so the bytes stay stable: Anthropic sends them as image
// blocks (inside the tool_result for a result's), Chat Completions and
// Responses as data-URL parts of the user message after the tool outputs,
// since their tool outputs carry text only.
package llm
