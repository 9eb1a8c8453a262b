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
// Nothing here touches the network beyond 127.0.0.1.
package llmtest
