// Package openai is the llm.Provider for the Chat Completions API as spoken
// by OpenAI and by the servers that imitate it (Ollama, llama.cpp, vLLM,
// OpenRouter, DeepSeek…), written over net/http and SSE.
//
// Contract:
//   - The body for a given llm.Request is always the same bytes (structs with
//     a fixed field order, tools in the given order, messages last), and
//     prompt_cache_key is the session id, so prefix caches keep hitting.
//   - Tool results (carried in user messages by package llm) become "tool"
//     messages; the per-turn reminder becomes a final user message.
//   - The stream parser tolerates the imitators' quirks: reasoning_content /
//     reasoning deltas, usage missing or in a chunk without choices,
//     llama.cpp timings, keep-alive comments, tool call deltas split by index,
//     and a whole JSON response where a stream was asked for.
//   - Usage is normalised so Input excludes cached tokens.
//   - Failures are *llm.Error values; the API key never appears in them.
package openai
