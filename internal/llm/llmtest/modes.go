package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// Mode makes the fake behave as one real server does in one respect: what
// it rejects (with that server's own error body), what it requires back,
// or how it streams. Modes combine; SetModes replaces the set.
type Mode string

// Modes, each from a server's documentation or from other clients' bug
// reports (the error bodies are copied from those reports).
const (
	// GeminiRejectsUnknown answers a body with prompt_cache_key as Gemini's
	// OpenAI endpoint does: 400, an array-wrapped Google error naming it.
	GeminiRejectsUnknown Mode = "gemini-unknown-field"
	// GroqRejectsUnknown answers prompt_cache_key with Groq's 400.
	GroqRejectsUnknown Mode = "groq-unknown-field"
	// MistralRejectsExtra answers stream_options (and any
	// max_completion_tokens or reasoning_content) with Mistral's 422
	// pydantic extra_forbidden body.
	MistralRejectsExtra Mode = "mistral-extra-forbidden"
	// RejectsMaxTokens answers max_tokens as OpenAI (and Azure) do for
	// gpt-5 and o-series models: 400 unsupported_parameter.
	RejectsMaxTokens Mode = "gpt5-max-tokens"
	// GeminiThoughtSignatures gives the first tool call of each reply a
	// thought signature (tool_calls[].extra_content.google.thought_signature)
	// and answers a later request whose copy of that call lacks it, or
	// altered it, with Gemini's 400.
	GeminiThoughtSignatures Mode = "gemini-thought-signatures"
	// DeepSeekThinking streams reasoning_content and DeepSeek's cache usage
	// fields, and answers an assistant tool-call message without
	// reasoning_content with DeepSeek's 400.
	DeepSeekThinking Mode = "deepseek-thinking"
	// OpenRouterReasoning streams reasoning_details (a reasoning.text
	// detail with a signature, split across deltas) and answers a tool-call
	// message that does not carry them back unchanged with OpenRouter's
	// wrapped upstream 400.
	OpenRouterReasoning Mode = "openrouter-reasoning-details"
	// OpenRouterCache reports cached prompt tokens only for requests that
	// carry a cache_control marker, as OpenRouter does for Claude: without
	// markers nothing is ever cached.
	OpenRouterCache Mode = "openrouter-cache-control"
	// RepeatToolNames repeats a tool call's name in every delta, as some
	// vLLM tool parsers and NVIDIA NIM do.
	RepeatToolNames Mode = "repeat-tool-names"
	// ObjectArguments sends a tool call's arguments as a JSON object
	// instead of a string, in one delta.
	ObjectArguments Mode = "object-arguments"
	// OpenAIEffortLevels takes reasoning_effort only as low, medium or
	// high (o3, gpt-5 before 5.1) and answers any other value with
	// OpenAI's 400 unsupported_value (body as Kilo-Org/cloud#3807 quotes
	// it). (Any reply's Usage.Reasoning is sent as
	// completion_tokens_details.reasoning_tokens, in every mode.)
	OpenAIEffortLevels Mode = "openai-effort-levels"
	// AnthropicRejectsBlank answers a request holding a whitespace-only
	// text block as the Messages API does (400 invalid_request_error).
	// The rule is now checked on every request; the mode keeps its body.
	AnthropicRejectsBlank Mode = "anthropic-blank-text"
	// AnthropicPreservedThinking is PreservedThinking as a mode, for
	// cmd/fakellm and the CLI scripts.
	AnthropicPreservedThinking Mode = "anthropic-preserved-thinking"
)

// AllModes lists every mode, for cmd/fakellm and the CLI scripts.
func AllModes() []Mode {
	m := []Mode{GeminiRejectsUnknown, GroqRejectsUnknown, MistralRejectsExtra, RejectsMaxTokens,
		GeminiThoughtSignatures, DeepSeekThinking, OpenRouterReasoning, OpenRouterCache,
		RepeatToolNames, ObjectArguments, AnthropicRejectsBlank, OpenAIEffortLevels, MistralContentParts, AnthropicPreservedThinking}
	sort.Slice(m, func(i, j int) bool { return m[i] < m[j] })
	return m
}

// Real error bodies. Each is a server's answer as other clients reported
// it; %s is filled with the field, model or position concerned.
const (
	geminiUnknownField  = `[{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"%s\": Cannot find field.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"Invalid JSON payload received. Unknown name \"%s\": Cannot find field."}]}]}}]`
	groqUnknownField    = `{"error":{"message":"property '%s' is unsupported","type":"invalid_request_error"}}`
	mistralExtra        = `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body",%s],"msg":"Extra inputs are not permitted","input":%s}]},"type":"invalid_request_error","param":null,"code":null}`
	openaiMaxTokens     = `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`
	geminiSignature     = `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call ` + "`default_api:%s`" + ` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.","status":"INVALID_ARGUMENT"}}]`
	deepseekReasoning   = `{"error":{"message":"Missing ` + "`reasoning_content`" + ` field in the assistant message at message index %d. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
	deepseekReasoningV4 = `{"error":{"message":"The ` + "`reasoning_content`" + ` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
	deepseekToolChoice  = `{"error":{"message":"Thinking mode does not support this tool_choice","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
	// Vertex's text for a signature it did not issue
	// (NoeFabris/opencode-antigravity-auth#368).
	geminiInvalidSignature = `[{"error":{"code":400,"message":"Unable to submit request because Thought signature is not valid.","status":"INVALID_ARGUMENT"}}]`
	openrouterUpstream     = `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":%s,"provider_name":"Google AI Studio"}}}`
	openaiEffortValue      = `{"error":{"message":"Unsupported value: 'reasoning_effort' does not support %s with this model. Supported values are: 'low', 'medium', and 'high'.","type":"invalid_request_error","param":"reasoning_effort","code":"unsupported_value"}}`
	anthropicBlank         = `{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must contain non-whitespace text"},"request_id":"req_011CXqXVfVqMJd8rzkVKPZDM"}`
)

// ErrorBodies are real servers' answers to a prompt over the window, and
// proxies' retryable failures, by name: what a test queues as
// Reply{Status, ErrorBody} (see ServerError).
var ErrorBodies = map[string]struct {
	Status int
	Body   string
}{
	"anthropic-prompt-too-long":  {400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 202128 tokens > 200000 maximum"}}`},
	"anthropic-input-max-tokens": {400, `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 178959 + 64000 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"},"request_id":"req_011CUB2XUHWkFnQzxcKBbjpF"}`},
	"openai-context":             {400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
	"gemini-context":             {400, `[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`},
	"xai-context":                {400, `{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 136973 tokens."}`},
	"groq-context":               {400, `{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
	"vllm-context":               {400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 33792 tokens (29696 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
	"llamacpp-context":           {400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":8437,"n_ctx":8192}}`},
	"cloudflare-520":             {520, `<!DOCTYPE html><html><head><title>api.example.com | 520: Web server is returning an unknown error</title></head><body>cloudflare</body></html>`},
	"cloudflare-522":             {522, `<!DOCTYPE html><html><head><title>api.example.com | 522: Connection timed out</title></head><body>cloudflare</body></html>`},
	"cloudflare-524":             {524, `<!DOCTYPE html><html><head><title>api.example.com | 524: A timeout occurred</title></head><body>cloudflare</body></html>`},
}

// ServerError returns the reply that answers with the named real error.
func ServerError(name string) (Reply, bool) {
	e, ok := ErrorBodies[name]
	return Reply{Status: e.Status, ErrorBody: e.Body}, ok
}

// SetModes replaces the server's modes. AnthropicPreservedThinking turns
// PreservedThinking on; leaving it out does not turn it off.
func (s *Server) SetModes(modes ...Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modes = map[Mode]bool{}
	for _, m := range modes {
		s.modes[m] = true
	}
	s.preserved = s.preserved || s.modes[AnthropicPreservedThinking]
}

func (s *Server) has(m Mode) bool { return s.modes[m] }

// hasMode is has for callers without s.mu.
func (s *Server) hasMode(m Mode) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has(m)
}

// rawRequest is the request body as the modes inspect it.
type rawRequest struct {
	Fields   map[string]json.RawMessage
	Messages []map[string]json.RawMessage
}

func parseRaw(body []byte) rawRequest {
	var r rawRequest
	_ = json.Unmarshal(body, &r.Fields)
	_ = json.Unmarshal(r.Fields["messages"], &r.Messages)
	return r
}

// reject returns the status and body a server in the current modes
// answers req with, or 0 when it accepts it. Called with s.mu held.
func (s *Server) reject(f Format, body []byte) (int, string) {
	raw := parseRaw(body)
	if f == FormatAnthropic {
		if s.has(AnthropicRejectsBlank) && hasBlankText(raw) {
			return 400, anthropicBlank
		}
		return 0, ""
	}
	_, cacheKey := raw.Fields["prompt_cache_key"]
	switch {
	case s.has(GeminiRejectsUnknown) && cacheKey:
		return 400, fmt.Sprintf(geminiUnknownField, "prompt_cache_key", "prompt_cache_key")
	case s.has(GroqRejectsUnknown) && cacheKey:
		return 400, fmt.Sprintf(groqUnknownField, "prompt_cache_key")
	}
	if s.has(MistralRejectsExtra) {
		if _, ok := raw.Fields["stream_options"]; ok {
			return 422, fmt.Sprintf(mistralExtra, `"stream_options","include_usage"`, "true")
		}
		if v, ok := raw.Fields["max_completion_tokens"]; ok {
			return 422, fmt.Sprintf(mistralExtra, `"max_completion_tokens"`, string(v))
		}
		for i, m := range raw.Messages {
			if v, ok := m["reasoning_content"]; ok {
				return 422, fmt.Sprintf(mistralExtra, fmt.Sprintf(`"messages",%d,"assistant","reasoning_content"`, i), string(v))
			}
		}
	}
	if v, ok := raw.Fields["reasoning_effort"]; ok && s.has(OpenAIEffortLevels) {
		switch string(v) {
		case `"low"`, `"medium"`, `"high"`:
		default:
			return 400, fmt.Sprintf(openaiEffortValue, strings.ReplaceAll(string(v), `"`, "'"))
		}
	}
	if _, ok := raw.Fields["max_tokens"]; ok && s.has(RejectsMaxTokens) {
		return 400, openaiMaxTokens
	}
	if st, eb := s.reasoningRules(raw); st != 0 {
		return st, eb
	}
	return 0, ""
}

// openaiCall is a tool call as the reasoning rules read it.
type openaiCall struct {
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
	ExtraContent struct {
		Google struct {
			ThoughtSignature *string `json:"thought_signature"`
		} `json:"google"`
	} `json:"extra_content"`
}

// skipSignature is the value Gemini documents for calls it did not
// produce (ai.google.dev/gemini-api/docs/thought-signatures, FAQ).
const skipSignature = "skip_thought_signature_validator"

// reasoningRules checks what DeepSeek, Gemini and OpenRouter need back on
// tool-call turns. Called with s.mu held.
func (s *Server) reasoningRules(raw rawRequest) (int, string) {
	model, _ := jsonStr(raw.Fields["model"])
	thinkingOff := false
	var th struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw.Fields["thinking"], &th) == nil && th.Type == "disabled" {
		thinkingOff = true
	}
	if s.has(DeepSeekThinking) && !thinkingOff {
		// A forced tool is refused in thinking mode (tickernelz/opencode-mem#253).
		var tc any
		_ = json.Unmarshal(raw.Fields["tool_choice"], &tc)
		if v, ok := tc.(string); (ok && v == "required") || (tc != nil && !ok) {
			return 400, deepseekToolChoice
		}
	}
	// The current turn starts after the last user message.
	current := 0
	for i, m := range raw.Messages {
		if string(m["role"]) == `"user"` {
			current = i + 1
		}
	}
	turnHasCalls := false
	for i, m := range raw.Messages {
		if string(m["role"]) == `"user"` {
			turnHasCalls = false
			// DeepSeek: every assistant message of a turn that made
			// tool calls keeps its reasoning_content in all later
			// requests (docs: guides/thinking_mode, tool calls).
			for k := i + 1; k < len(raw.Messages) && string(raw.Messages[k]["role"]) != `"user"`; k++ {
				var cs []openaiCall
				_ = json.Unmarshal(raw.Messages[k]["tool_calls"], &cs)
				turnHasCalls = turnHasCalls || len(cs) > 0
			}
			continue
		}
		if string(m["role"]) != `"assistant"` {
			continue
		}
		if s.has(DeepSeekThinking) && !thinkingOff && turnHasCalls {
			if _, ok := m["reasoning_content"]; !ok {
				return 400, deepseekMissing(model, i)
			}
		}
		var calls []openaiCall
		_ = json.Unmarshal(m["tool_calls"], &calls)
		for k, c := range calls {
			sig := c.ExtraContent.Google.ThoughtSignature
			want, issued := s.signatures[c.ID]
			if s.has(GeminiThoughtSignatures) && i >= current && (k == 0 || issued) {
				// Each step of the current turn: the first call carries
				// the signature it was given (ai.google.dev
				// thought-signatures: parallel calls sign only the first).
				switch {
				case sig == nil || *sig == "":
					return 400, fmt.Sprintf(geminiSignature, c.Function.Name, k+2)
				case *sig == skipSignature:
				case !issued || *sig != want:
					return 400, geminiInvalidSignature
				}
			}
			if want, issued := s.details[c.ID]; s.has(OpenRouterReasoning) && issued && !sameJSON(m["reasoning_details"], want) {
				inner := fmt.Sprintf(geminiSignature, c.Function.Name, k+2)
				return 400, fmt.Sprintf(openrouterUpstream, jsonString(inner))
			}
		}
	}
	return 0, ""
}

func jsonStr(raw json.RawMessage) (string, bool) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// deepseekMissing is DeepSeek's answer to a tool-call turn sent back
// without reasoning_content: the V4 text from April 2026 on
// (anomalyco/opencode#24083, #24722), the earlier one for the older models
// (continuedev/continue#11285).
func deepseekMissing(model string, index int) string {
	k := modelKey(model)
	if strings.Contains(k, "reasoner") || strings.Contains(k, "deepseek-chat") || strings.Contains(k, "v3") {
		return fmt.Sprintf(deepseekReasoning, index)
	}
	return deepseekReasoningV4
}

func hasBlankText(raw rawRequest) bool {
	for _, m := range raw.Messages {
		var blocks []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(m["content"], &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "text" && b.Text != nil && strings.TrimSpace(*b.Text) == "" {
				return true
			}
		}
	}
	return false
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return jsonString(x) == jsonString(y)
}

// hasCacheControl reports whether an OpenAI-format body carries a marker.
func hasCacheControl(body []byte) bool {
	return strings.Contains(string(body), `"cache_control"`)
}

// fakeSignature is the thought signature issued for call id.
func fakeSignature(id string) string { return "CiQB" + strings.ToUpper(id) + "/sig==" }

// stream options the modes set for one reply.
type streamModes struct {
	deepseek, geminiSig, openrouterDetails, repeatNames, objectArgs bool
	// cached overrides the reply's cache-read count (OpenRouterCache); -1 keeps it.
	cached int
}

func (s *Server) streamModes(f Format, body []byte, prompt int) streamModes {
	m := streamModes{
		deepseek: s.has(DeepSeekThinking), geminiSig: s.has(GeminiThoughtSignatures),
		openrouterDetails: s.has(OpenRouterReasoning), repeatNames: s.has(RepeatToolNames),
		objectArgs: s.has(ObjectArguments), cached: -1,
	}
	if f == FormatOpenAI && s.has(OpenRouterCache) {
		m.cached = 0
		if hasCacheControl(body) && s.sawMarker {
			m.cached = prompt * 9 / 10
		}
		s.sawMarker = s.sawMarker || hasCacheControl(body)
	}
	return m
}

// httpError writes an error body with the status.
func httpError(w http.ResponseWriter, status int, body string) {
	ct := "application/json"
	if strings.HasPrefix(body, "<") {
		ct = "text/html; charset=UTF-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// Reject is what srv in its current modes answers body with (0 when it
// accepts it), for tests of the fake itself.
func Reject(srv *Server, f Format, body []byte) (int, string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.reject(f, body)
}

// Local makes the server also answer as a local server's own API does:
// Ollama's /api/show and /api/ps, or llama.cpp's /props, with Context as
// the context it runs the model with.
type Local struct {
	Kind    string // "ollama" or "llamacpp"
	Context int    // the context the server runs the model with
	Trained int    // Ollama: model_info's <arch>.context_length
	// Ollama: where Context shows. InParameters puts "num_ctx N" in
	// /api/show's parameters (a Modelfile PARAMETER); Loaded lists the
	// model in /api/ps with context_length. Neither: the default applies.
	InParameters, Loaded bool
	// Truncate reports at most Context prompt tokens for a longer request,
	// as Ollama does when it cuts the front of a prompt to fit.
	Truncate bool
}

// SetLocal turns the local-server endpoints on (a zero Local turns them off).
func (s *Server) SetLocal(l Local) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local = l
}

// serveLocal answers a local server's own endpoints; false when path is
// not one of them or the server is not emulating that kind.
func (s *Server) serveLocal(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	l := s.local
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case l.Kind == "ollama" && r.URL.Path == "/api/show":
		var req struct {
			Model string `json:"model"`
			Name  string `json:"name"`
		}
		_ = json.Unmarshal(body, &req)
		params := "temperature 0.7\nstop \"<|im_end|>\""
		if l.InParameters {
			params = fmt.Sprintf("num_ctx %d\n%s", l.Context, params)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonString(obj{"modelfile": "FROM " + req.Model, "parameters": params, "template": "{{ .Prompt }}",
			"details":      obj{"format": "gguf", "family": "qwen3", "parameter_size": "30.5B", "quantization_level": "Q4_K_M"},
			"model_info":   obj{"general.architecture": "qwen3moe", "qwen3moe.context_length": l.Trained, "qwen3moe.block_count": 48},
			"capabilities": []string{"completion", "tools"}}))
		return true
	case l.Kind == "ollama" && r.URL.Path == "/api/ps":
		models := []any{}
		if l.Loaded {
			models = append(models, obj{"name": "qwen3-coder:latest", "model": "qwen3-coder:latest", "size": int64(19000000000), "context_length": l.Context})
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonString(obj{"models": models}))
		return true
	case l.Kind == "llamacpp" && r.URL.Path == "/props":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonString(obj{"default_generation_settings": obj{"n_ctx": l.Context, "n_predict": -1, "model": "model.gguf"},
			"total_slots": 1, "model_path": "/models/model.gguf", "chat_template": "…"}))
		return true
	}
	return false
}
