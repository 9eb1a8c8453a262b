// Package llmtest is a local fake model provider for tests: an HTTP server
// on loopback that speaks both the Anthropic Messages and the OpenAI Chat
// Completions wire formats, streaming SSE the way the real APIs do, and
// serves scripted replies in order. Tests of the agent loop, the CLI and the
// UI point a real adapter at Server.URL and then inspect Server.Requests.
//
// It also replays go-vcr v2 cassettes (LoadCassette, ServeCassette), which is
// how the adapters are checked against recorded real provider streams, and
// cmd/fakellm runs the same server as a separate process for end-to-end
// scripts.
//
// Two modes emulate what real servers enforce. PreservedThinking signs every
// Anthropic reply's thinking block with an HMAC of its exact prefix (system,
// tools, earlier messages, cache_control aside) and checks every block sent
// back: a changed prefix gets the documented 400 "The block is bound to a
// different conversation", or, with drop_block and its beta header, the
// invalid blocks are dropped and listed in input_transformations.
// ContextLimit refuses prompts over a token limit with each API's own
// "context too long" body and reports the counted prompt as usage.
//
// SetModes makes it behave as particular OpenAI-compatible servers do, one
// Mode per behaviour, with each server's real error body: rejecting
// prompt_cache_key (Gemini, Groq), stream_options (Mistral) or max_tokens
// (gpt-5 deployments); requiring DeepSeek's reasoning_content, Gemini's
// thought signatures or OpenRouter's reasoning_details back; caching only
// marked requests (Claude on OpenRouter); repeating tool names or sending
// arguments as objects; rejecting whitespace-only Anthropic text blocks.
// ErrorBodies holds real context-too-long and Cloudflare 52x answers, and
// SetLocal answers Ollama's /api/show and /api/ps or llama.cpp's /props,
// optionally truncating long prompts the way Ollama does.
//
// It also speaks OpenAI's Responses API (POST …/responses, responses.go):
// streamed or whole, reasoning items with encrypted_content when asked
// for, and the API's own 400s for input that breaks its pairing rules (a
// reasoning item without the item that followed it, an item id without
// its reasoning item, a function_call_output without its call or a call
// without its output, a reasoning item that was not persisted or does
// not verify), unknown parameters and an input over the window.
// MistralContentParts sends Chat Completions content as Magistral's
// arrays of thinking and text parts.
//
// Nothing here touches the network beyond 127.0.0.1.
package llmtest
