// Package cacheplan decides where a request's prompt-cache breakpoints go
// (Anthropic's cache_control markers): on the tool definitions or the
// system prompt, and on which stored blocks of the conversation. It is
// the one place of that policy: the Anthropic adapter marks its body
// where the plan says, and the Chat Completions adapter marks the same
// places for Claude behind OpenRouter, and the replay benchmark's cache
// simulator reads the plan instead of re-implementing it. A plan names
// stored blocks (llm.Request.Messages[i].Blocks[j]), never wire
// positions: each adapter maps them onto its own format.
package cacheplan
