// Package openai is the llm.Provider for the Chat Completions API as spoken
// by OpenAI and by the servers that imitate it (Ollama, llama.cpp, vLLM,
// OpenRouter, DeepSeek, Gemini, Groq, Mistral, xAI…), written over net/http
// and SSE.
//
// Contract:
//   - What each server accepts and needs is a Profile: prompt_cache_key,
//     stream_options, max_tokens or max_completion_tokens, reasoning
//     passed back (DeepSeek's reasoning_content, Gemini's thought
//     signatures, OpenRouter's reasoning_details) and cache_control
//     markers (Claude behind OpenRouter, placed where the Anthropic adapter
//     puts its breakpoints), and reasoning_effort (EFFORT, for OpenAI's
//     reasoning models and OpenRouter; max is sent as OpenAI's xhigh). It is
//     chosen by host, then by model family, or forced by name
//     (Config.Profile, OPENAI_PROFILE).
//   - A 400 or 422 that names a field the server does not accept drops the
//     field for the rest of the session, sends the request again at once
//     and says so in one llm.EventNotice. Nothing else is retried here.
//   - For a given profile the body for a given llm.Request is always the
//     same bytes (structs with a fixed field order, tools in the given
//     order, messages last), and prompt_cache_key is the session id, so
//     prefix caches keep hitting; the profile changes at most once per
//     learned field in a session.
//   - Tool results (carried in user messages by package llm) become "tool"
//     messages; the per-turn reminder becomes a final user message;
//     whitespace-only text blocks are never sent or kept.
//   - The stream parser tolerates the imitators' quirks: reasoning_content /
//     reasoning deltas, usage missing or in a chunk without choices,
//     llama.cpp timings, keep-alive comments, tool call deltas split by
//     index, names repeated in every delta, arguments sent as a JSON object,
//     content sent as an array of parts (Magistral's thinking and text
//     parts, gpt-oss's reasoning parts: reasoning becomes thinking), and a
//     whole JSON response where a stream was asked for. A refusal
//     (finish_reason content_filter, or a refusal delta) is StopRefusal; a
//     reply cut by the limit is StopMaxTokens, tool calls and all.
//   - Usage is normalised so Input excludes cached tokens; reasoning_tokens
//     (completion_tokens_details) is Usage.Reasoning, a share of Output.
//   - Failures are *llm.Error values; the API key never appears in them.
package openai
