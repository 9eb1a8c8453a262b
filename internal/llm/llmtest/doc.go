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
// Every Anthropic-format request is checked against the Messages API's
// request-validation rules for thinking and tool use, in every mode, and a
// request that breaks one gets the 400 invalid_request_error with the text
// other clients reported (rules.go; IDs as in shared/notes/thinking-rules.md):
//
//   - A1 with thinking on (type enabled or adaptive; no type on an
//     always-thinking model or under PreservedThinking), the assistant
//     message whose tool calls the last user message answers starts with
//     thinking: n8n-io/n8n#22550, Kilo-Org/kilocode#5219,
//     OpenRouterTeam/ai-sdk-provider#162.
//   - A2 an assistant message with thinking starts with it:
//     anthropics/claude-code#20705. A7 none ends with it:
//     tailcallhq/forgecode#2107, router-for-me/CLIProxyAPI#5322.
//   - A3 the latest assistant message's thinking blocks come back as
//     received (anthropics/claude-code#19539, vybestack/llxprt-code#1653);
//     A4 every signature verifies for this model (vybestack/llxprt-code#2335,
//     caozhiyuan/copilot-api#73), except that preserved-thinking models drop
//     another model's block silently (docs: preserved-thinking).
//     Signatures bind the block's text and model in every mode.
//   - A6 thinking off: no thinking in a trailing assistant message
//     (tailcallhq/forgecode#1853).
//   - A8 the mode suits the model (Kilo-Org/kilocode#11194,
//     danny-avila/LibreChat#13704, anthropics/claude-code#51212); A9 forced
//     tool_choice (mastra-ai/mastra#7507, workglow-dev/libs#746,
//     can1357/oh-my-pi#12939); A10 budget >= 1024 and below max_tokens
//     unless interleaved (workglow-dev/libs#746,
//     liuw1535/antigravity2api-nodejs#149), temperature 1, no top_k, top_p
//     >= 0.95 (quarkiverse/quarkus-langchain4j#1812; the top_p text is not
//     verified); A11 clear_thinking needs thinking
//     (router-for-me/CLIProxyAPI#4957); A12 every tool_use answered in the
//     next message and every tool_result called in the previous one
//     (anthropics/claude-code#5989, #13460); no whitespace-only text
//     (nick1udwig/kibitz#87).
//
// Claude 4.6 and later refuse assistant prefill, and Opus 4.7+ and Claude 5
// refuse sampling parameters (smallmain/vscode-unify-chat-provider#249,
// mnfst/modelparams.dev#238). With thinking on, every reply starts with a
// thinking block (empty text when none is scripted). Rejected lists every
// request refused by a rule, a mode or the window. PreservedThinking adds A5: the signature also
// binds the block to its exact prefix (system, tools, earlier messages,
// cache_control aside), and a changed prefix gets the documented 400 "The
// block is bound to a different conversation" for that block and every
// later one, or, with drop_block and its beta header, the invalid blocks
// are dropped and listed in input_transformations (docs:
// preserved-thinking, prefix-checks).
//
// Usage tells the prompt's real size: a reply scripted without usage
// reports the counted prompt (CountTokens, or ContextLimit's counter),
// split as the provider's prefix cache would split it, so input + cache
// read + cache write (prompt_tokens for OpenAI) is the whole prompt
// (usage.go). The window is ContextLimit's, else the model's catalogue
// window, and a prompt over it gets the server's own overflow body
// (Anthropic's "prompt is too long", OpenAI's context_length_exceeded,
// DeepSeek's, which counts max_tokens in (evalstate/fast-agent#621,
// bytedance/deer-flow#66), Gemini's, OpenRouter's, which counts max_tokens
// in too (OpenHands/OpenHands#9937, refly-ai/refly#1177). An Anthropic request
// with thinking on counts max_tokens in as well, and one whose prompt fits
// but prompt + max_tokens does not gets "input length and `max_tokens`
// exceed context limit: X + Y > Z, decrease input length or `max_tokens`
// and try again" (docs: extended-thinking-models; continuedev/continue#6080,
// anthropics/claude-code#228, kortix-ai/suna#172; see
// anthropicInputMaxTokens).
//
// SetModes makes it behave as particular OpenAI-compatible servers do, one
// Mode per behaviour, with each server's real error body: rejecting
// prompt_cache_key (Gemini, Groq), stream_options (Mistral) or max_tokens
// (gpt-5 deployments); requiring DeepSeek's reasoning_content on every
// assistant message of a turn that made tool calls (docs: thinking_mode;
// anomalyco/opencode#24722, MoonshotAI/kimi-cli#2141) and refusing forced
// tools in thinking mode, Gemini's thought signature on the first call of
// each step of the current turn (docs: thought-signatures; the documented
// skip_thought_signature_validator passes, a forged one does not), or
// OpenRouter's reasoning_details unchanged; caching only
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
