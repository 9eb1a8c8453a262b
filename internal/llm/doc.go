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
// known model's window, longest reply, list price and whether it reasons,
// matched by exact name, dated snapshot or declared family, never by bare
// prefix. A missing price is unknown, not zero.
package llm
