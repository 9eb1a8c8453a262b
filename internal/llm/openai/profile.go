package openai

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// Profile is what one server accepts and needs beyond the common core of
// Chat Completions. Servers that imitate the API reject what they do not
// know (Gemini, Groq and Mistral answer 400 or 422 to prompt_cache_key or
// stream_options) and need what OpenAI has no field for (DeepSeek's
// reasoning_content, Gemini's thought signatures, OpenRouter's
// reasoning_details and cache_control).
type Profile struct {
	Name string
	// CacheKey sends prompt_cache_key (the session id).
	CacheKey bool
	// StreamOptions sends stream_options.include_usage, without which
	// OpenAI sends no usage in a stream.
	StreamOptions bool
	// MaxCompletionTokens names the limit max_completion_tokens (OpenAI's
	// current field, required by its reasoning models) instead of max_tokens.
	MaxCompletionTokens bool
	// ReasoningContent sends the assistant's reasoning back as
	// reasoning_content on tool-call turns: DeepSeek's thinking mode answers
	// 400 without it.
	ReasoningContent bool
	// ThoughtSignatures sends Gemini's thought signatures back in
	// tool_calls[].extra_content.google.thought_signature (only those the
	// server issued).
	ThoughtSignatures bool
	// ReasoningDetails sends OpenRouter's reasoning_details back with the
	// assistant message they came with.
	ReasoningDetails bool
	// CacheControl puts Anthropic-style cache_control breakpoints on content
	// parts, where the Anthropic adapter would put them: OpenRouter caches
	// Claude only when asked.
	CacheControl bool
	// ReasoningEffort sends EFFORT as reasoning_effort: OpenAI's reasoning
	// models (gpt-5, the o-series; none, minimal, low, medium, high,
	// xhigh) and OpenRouter, which takes the same shorthand for every
	// reasoning model it routes (and "max").
	ReasoningEffort bool
}

// Profile names a user can force with OPENAI_PROFILE.
var profiles = map[string]Profile{
	// Everything on: OpenAI's own API and servers known to nothing, which
	// then teach us what they reject (see learn).
	"openai":   {CacheKey: true, StreamOptions: true, MaxCompletionTokens: true, ThoughtSignatures: true, ReasoningDetails: true},
	"generic":  {CacheKey: true, StreamOptions: true, ThoughtSignatures: true, ReasoningDetails: true},
	"azure":    {CacheKey: true, StreamOptions: true},
	"gemini":   {StreamOptions: true, ThoughtSignatures: true},
	"groq":     {StreamOptions: true},
	"mistral":  {},
	"deepseek": {StreamOptions: true, ReasoningContent: true},
	// OpenRouter passes prompt_cache_key to OpenAI models and ignores it
	// elsewhere; cache_control is switched on per model family.
	"openrouter": {CacheKey: true, StreamOptions: true, ReasoningDetails: true, ThoughtSignatures: true, ReasoningEffort: true},
	"xai":        {CacheKey: true, StreamOptions: true},
	"ollama":     {StreamOptions: true},
	"llamacpp":   {StreamOptions: true},
	"vllm":       {StreamOptions: true},
}

func init() {
	for n, p := range profiles {
		p.Name = n
		profiles[n] = p
	}
}

// ProfileNames lists the profiles OPENAI_PROFILE accepts.
func ProfileNames() []string {
	var out []string
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ProfileNamed returns a named profile.
func ProfileNamed(name string) (Profile, bool) {
	p, ok := profiles[strings.ToLower(strings.TrimSpace(name))]
	return p, ok
}

// hosts maps a base URL's host to its server's profile. Local servers are
// told apart by their default port, which is only a guess; a wrong guess
// costs at most one rejected request (see learn).
var hosts = []struct{ suffix, profile string }{
	{"api.openai.com", "openai"},
	{"openai.azure.com", "azure"},
	{"services.ai.azure.com", "azure"},
	{"generativelanguage.googleapis.com", "gemini"},
	{"api.groq.com", "groq"},
	{"api.mistral.ai", "mistral"},
	{"api.deepseek.com", "deepseek"},
	{"openrouter.ai", "openrouter"},
	{"api.x.ai", "xai"},
}

// reasoningModel matches OpenAI's models that take only
// max_completion_tokens (gpt-5 and the o-series), behind any host.
var reasoningModel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(gpt-5|o[1-9])([-.:]|$)`) })

// ChooseProfile picks the profile for a base URL and model: by host first,
// then by model family on hosts it does not know (an Azure deployment or a
// gateway serving gpt-5 needs max_completion_tokens; a DeepSeek model needs
// its reasoning passed back wherever it runs).
func ChooseProfile(baseURL, model string) Profile {
	host, port := "", ""
	if u, err := url.Parse(baseURL); err == nil {
		host, port = strings.ToLower(u.Hostname()), u.Port()
	}
	if baseURL == "" {
		host = "api.openai.com"
	}
	name := ""
	for _, h := range hosts {
		if host == h.suffix || strings.HasSuffix(host, "."+h.suffix) {
			name = h.profile
			break
		}
	}
	if name == "" {
		switch port {
		case "11434":
			name = "ollama"
		default:
			name = "generic"
		}
	}
	return forModel(profiles[name], model)
}

// forModel adjusts a server's profile for the model family it serves.
func forModel(p Profile, model string) Profile {
	m := llm.Normalize(model)
	switch p.Name {
	case "openai":
		p.ReasoningEffort = reasoningModel().MatchString(m)
	case "generic", "azure", "ollama", "llamacpp", "vllm":
		if reasoningModel().MatchString(m) {
			p.MaxCompletionTokens = true
			p.ReasoningEffort = true
		}
		if strings.HasPrefix(m, "deepseek") {
			p.ReasoningContent = true
		}
	case "openrouter":
		if isClaude(model) {
			p.CacheControl = true
		}
	}
	return p
}

// isClaude reports whether a router's model name is an Anthropic model.
func isClaude(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "anthropic/") || strings.HasPrefix(llm.Normalize(m), "claude-")
}

// learnable are the request fields a server may reject by name, with what
// dropping each means.
var learnable = map[string]func(p *Profile) (changed bool){
	"prompt_cache_key": func(p *Profile) bool { return flip(&p.CacheKey) },
	"stream_options":   func(p *Profile) bool { return flip(&p.StreamOptions) },
	"include_usage":    func(p *Profile) bool { return flip(&p.StreamOptions) },
	"max_completion_tokens": func(p *Profile) bool {
		return flip(&p.MaxCompletionTokens)
	},
	"max_tokens": func(p *Profile) bool {
		if p.MaxCompletionTokens {
			return false
		}
		p.MaxCompletionTokens = true
		return true
	},
	"reasoning_content": func(p *Profile) bool { return flip(&p.ReasoningContent) },
	"extra_content":     func(p *Profile) bool { return flip(&p.ThoughtSignatures) },
	"reasoning_details": func(p *Profile) bool { return flip(&p.ReasoningDetails) },
	"cache_control":     func(p *Profile) bool { return flip(&p.CacheControl) },
	"reasoning_effort":  func(p *Profile) bool { return flip(&p.ReasoningEffort) },
}

// flip turns an on setting off and reports whether it was on.
func flip(b *bool) bool {
	if !*b {
		return false
	}
	*b = false
	return true
}

// rejections are the ways servers name a field they do not accept, each
// from a real server's error body:
//
//	Gemini   Invalid JSON payload received. Unknown name "prompt_cache_key": Cannot find field.
//	Groq     property 'prompt_cache_key' is unsupported
//	Mistral  {"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted"}
//	vLLM     the same pydantic extra_forbidden shape, loc ("body", "stream_options")
//	OpenAI   Unrecognized request argument supplied: stream_options (Azure's older API versions)
//	OpenAI   Unknown parameter: 'prompt_cache_key'.
//	OpenAI   Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.
//	OpenAI   Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'.
var rejections = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`Unknown name \\?"([a-z_]+)\\?"`),
		regexp.MustCompile(`property '([a-z_]+)' is unsupported`),
		regexp.MustCompile(`"loc":\s*\[\s*"body"\s*,\s*"([a-z_]+)"`),
		regexp.MustCompile(`'body',\s*'([a-z_]+)'`),
		regexp.MustCompile(`Unrecognized request argument supplied: ([a-z_]+)`),
		regexp.MustCompile(`Unknown parameter: '([a-z_.\[\]0-9]+)'`),
		regexp.MustCompile(`Unsupported parameter: '([a-z_]+)'`),
		regexp.MustCompile(`Unsupported value: '([a-z_]+)'`),
		regexp.MustCompile(`Extra inputs are not permitted.{0,80}?([a-z]+_[a-z_]+)`),
	}
})

// rejectedField returns the request field a 400 or 422 error names as
// unknown or unsupported, when it is one the adapter can leave out. Only
// the message is read, so a field named in a nested path
// ("messages[3].reasoning_content") counts too.
func rejectedField(e *llm.Error) (string, bool) {
	if e == nil || (e.Status != 400 && e.Status != 422) {
		return "", false
	}
	for _, re := range rejections() {
		for _, m := range re.FindAllStringSubmatch(e.Message, -1) {
			f := m[1]
			if i := strings.LastIndexAny(f, ".]"); i >= 0 {
				f = f[i+1:]
			}
			if _, ok := learnable[f]; ok {
				return f, true
			}
		}
	}
	// Mistral's pydantic loc can name the nested field last
	// (["body","messages",3,"assistant","reasoning_content"]).
	if strings.Contains(e.Message, "extra_forbidden") || strings.Contains(e.Message, "Extra inputs are not permitted") {
		for f := range learnable {
			if strings.Contains(e.Message, `"`+f+`"`) || strings.Contains(e.Message, `'`+f+`'`) {
				return f, true
			}
		}
	}
	return "", false
}

// describeLearned is the one-line notice for a dropped field.
func describeLearned(field string) string {
	what := map[string]string{
		"prompt_cache_key":      "prompt_cache_key (its prompt cache, if any, is keyed without it)",
		"stream_options":        "stream_options (token usage may be missing from streams)",
		"include_usage":         "stream_options (token usage may be missing from streams)",
		"max_completion_tokens": "max_completion_tokens (using max_tokens)",
		"max_tokens":            "max_tokens (using max_completion_tokens)",
		"reasoning_content":     "reasoning_content (reasoning is not sent back)",
		"extra_content":         "thought signatures (extra_content)",
		"reasoning_details":     "reasoning_details",
		"cache_control":         "cache_control markers",
		"reasoning_effort":      "reasoning_effort (EFFORT is not applied; the model's default effort is used)",
	}[field]
	return fmt.Sprintf("the server rejected %s; harness sent the request again without it and will for the rest of the session (set OPENAI_PROFILE to choose a server profile)", what)
}
