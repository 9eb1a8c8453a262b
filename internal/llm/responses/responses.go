package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider. BaseURL is used as given, /responses added
// to its path and its query kept (Azure's older endpoints take
// ?api-version=…); one with no path gets /v1. HTTPClient defaults to a
// client without a total timeout (cancel through the context).
type Config struct {
	BaseURL    string
	APIKey     string
	HTTPClient *http.Client
	// IdleTimeout ends a request on which nothing arrived for that long as
	// a cut stream (retried); 0 means llm.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Store sends store: true, so the server keeps each response (for its
	// dashboard, evals or distillation). By default nothing is kept and
	// reasoning travels back encrypted.
	Store bool
	// NoStream asks for whole responses instead of event streams.
	NoStream bool
}

// Provider talks to a Responses endpoint. It is safe for concurrent use.
type Provider struct {
	x      llm.Exchange
	store  bool
	stream bool

	// dropped holds what the server's own errors taught this session.
	mu      sync.Mutex
	dropped map[string]bool
	// issued are the reasoning items this provider received; once the
	// server could not verify an item (encrypted for another account or
	// resource: a resumed session, a changed key), only these go back.
	issued  map[string]bool
	foreign bool
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) (*Provider, error) {
	endpoint, err := Endpoint(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
		if IsAzure(cfg.BaseURL) {
			// Azure's documented header for a key; its v1 API also takes
			// the bearer form OpenAI's SDKs send.
			h.Set("api-key", cfg.APIKey)
		}
	}
	p := &Provider{store: cfg.Store, stream: !cfg.NoStream, dropped: map[string]bool{}, issued: map[string]bool{}}
	p.x = llm.Exchange{
		Name: "openai", Client: client, Endpoint: endpoint, Header: h, Key: cfg.APIKey,
		StatusError: statusError, Stream: parseStream, Decode: DecodeResponse,
		IdleTimeout: cfg.IdleTimeout,
	}
	return p, nil
}

// Endpoint is the URL requests for baseURL are posted to.
func Endpoint(baseURL string) (string, error) {
	base := strings.TrimSpace(baseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("BASE_URL=%q is not a URL the Responses API can be reached at (want e.g. %s)", baseURL, DefaultBaseURL)
	}
	p := strings.TrimRight(u.Path, "/")
	if p == "" {
		p = "/v1"
	}
	if !strings.HasSuffix(p, "/responses") {
		p += "/responses"
	}
	u.Path = p
	return u.String(), nil
}

// IsAzure reports whether baseURL is an Azure OpenAI resource.
func IsAzure(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, s := range []string{".openai.azure.com", ".services.ai.azure.com", ".cognitiveservices.azure.com", ".openai.azure.us", ".openai.azure.cn"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// Name implements llm.Provider: prices and display are OpenAI's.
func (p *Provider) Name() string { return "openai" }

// reasoningFamily matches OpenAI's reasoning models by name, for those the
// catalogue does not know: gpt-5 and its variants, the o-series, codex.
var reasoningFamily = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(gpt-5|o[1-9]|codex)([-.:]|$)`) })

// Reasons reports whether model takes reasoning settings. A model that
// does not answers reasoning.effort with 400 "Unsupported parameter".
func Reasons(model string) bool {
	if m, ok := llm.LookupModel(model); ok && m.Reasoning {
		return true
	}
	n := llm.Normalize(model)
	return reasoningFamily().MatchString(n) && !strings.HasPrefix(n, "gpt-5-chat")
}

// options are the settings requests for model are sent with now.
func (p *Provider) options(model string) options {
	p.mu.Lock()
	defer p.mu.Unlock()
	reasoning := Reasons(model) && !p.dropped["reasoning"]
	o := options{
		store: p.store, stream: p.stream,
		reasoning: reasoning,
		summary:   reasoning && !p.dropped["reasoning.summary"],
		cacheKey:  !p.dropped["prompt_cache_key"],
	}
	if p.foreign {
		o.keep = func(id string) bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.issued[id]
		}
	}
	return o
}

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return llm.MarshalBody(buildRequest(req, p.options(req.Model)))
}

// maxLearn bounds how many settings one request may learn to drop.
const maxLearn = 3

// Stream implements llm.Provider. A 400 that names a setting this server
// or account does not take (reasoning summaries for an unverified
// organisation, reasoning for a model without it, prompt_cache_key behind
// a gateway) drops it for the rest of the session and sends the request
// again at once, with one EventNotice saying so.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	for tries := 0; ; tries++ {
		body, err := p.MarshalRequest(req)
		if err != nil {
			return nil, fmt.Errorf("openai responses: encode request: %w", err)
		}
		reply, err := p.x.Do(ctx, body, onEvent)
		if err == nil {
			p.remember(reply)
		}
		if err == nil || tries >= maxLearn {
			return reply, err
		}
		var e *llm.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		f, ok := rejected(e)
		if !ok && unverified(e) {
			f, ok = "foreign reasoning", true
		}
		if !ok || !p.learn(f) {
			return nil, err
		}
		if onEvent != nil {
			onEvent(llm.Event{Type: llm.EventNotice, Text: fmt.Sprintf("the server rejected %s; harness sent the request again without it and will for the rest of the session", describe[f]), Err: err})
		}
	}
}

// remember records the reasoning items of a reply as this provider's own.
func (p *Provider) remember(r *llm.Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range r.Message.Blocks {
		if b.Type == llm.BlockThinking {
			if id := itemID(b.Item); id != "" {
				p.issued[id] = true
			}
		}
	}
}

// unverified reports the 400 a server answers a reasoning item it cannot
// decrypt with: "The encrypted content for item rs_… could not be
// verified." (code invalid_encrypted_content; openai/codex#3573,
// lidge-jun/opencodex#5583). Its items were encrypted for another
// organisation or Azure resource, as after resuming a session with
// another key; they are left out from then on.
func unverified(e *llm.Error) bool {
	return e.Status == 400 && (strings.Contains(e.Message, "could not be verified") || strings.Contains(e.Message, "invalid_encrypted_content"))
}

var describe = map[string]string{
	"foreign reasoning": "reasoning items it cannot verify (encrypted for another account or resource), so earlier steps' reasoning is not sent back",
	"reasoning.summary": "reasoning summaries (reasoning.summary; OpenAI gives them to verified organisations), so no reasoning is shown",
	"reasoning":         "reasoning settings (EFFORT is not applied)",
	"prompt_cache_key":  "prompt_cache_key (its prompt cache, if any, is keyed without it)",
}

func (p *Provider) learn(f string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f == "foreign reasoning" {
		if p.foreign {
			return false
		}
		p.foreign = true
		return true
	}
	if p.dropped[f] {
		return false
	}
	p.dropped[f] = true
	return true
}

// rejected reads which droppable setting a 400 names, from its param
// (carried in the message as "[param] …", see statusError) or its text:
//
//	OpenAI  Your organization must be verified to generate reasoning summaries. … (param reasoning.summary)
//	OpenAI  Unsupported parameter: 'reasoning.effort' is not supported with this model.
//	Gateway Unknown parameter: 'prompt_cache_key'.
func rejected(e *llm.Error) (string, bool) {
	if e.Status != 400 && e.Status != 422 {
		return "", false
	}
	m := e.Message
	switch {
	case strings.Contains(m, "reasoning.summary") || strings.Contains(m, "reasoning summaries"):
		return "reasoning.summary", true
	case strings.Contains(m, "'reasoning.effort'") || strings.Contains(m, "'reasoning'") || strings.Contains(m, "[reasoning.effort]"):
		return "reasoning", true
	case strings.Contains(m, "'prompt_cache_key'") || strings.Contains(m, "[prompt_cache_key]"):
		return "prompt_cache_key", true
	}
	return "", false
}

// statusError reads the API's error body,
// {"error":{"message","type","param","code"}}, into a classified error;
// the param is kept in the message, as it names the input item at fault.
func statusError(resp *http.Response, data []byte) *llm.Error {
	var w struct {
		Error *wireError `json:"error"`
	}
	errType, msg := "", llm.PlainBody(data)
	if json.Unmarshal(data, &w) == nil && w.Error != nil && w.Error.Message != "" {
		errType = strings.TrimSpace(w.Error.Type + " " + w.Error.Code)
		msg = w.Error.Message
		if w.Error.Param != "" {
			msg = "[" + w.Error.Param + "] " + msg
		}
	}
	if strings.Contains(errType, "insufficient_quota") {
		errType = "insufficient_quota"
	}
	return llm.StatusError(resp.StatusCode, resp.Header, errType, llm.ClipMessage(msg), time.Now())
}

// Use reports whether an OpenAI provider speaks the Responses API: as
// wire says (WIRE_API: "responses" or "chat"), else, as Codex does for
// OpenAI, for a reasoning model on OpenAI's own endpoint, where it keeps
// its reasoning across tool calls. Elsewhere, or with a server profile
// forced (OPENAI_PROFILE), Chat Completions stays the default: most
// compatible servers speak only that.
func Use(wire, profile, baseURL, model string) bool {
	switch wire {
	case "responses":
		return true
	case "chat":
		return false
	}
	if profile != "" {
		return false
	}
	host := "api.openai.com"
	if strings.TrimSpace(baseURL) != "" {
		u, err := url.Parse(baseURL)
		if err != nil {
			return false
		}
		host = strings.ToLower(u.Hostname())
	}
	return host == "api.openai.com" && Reasons(model)
}
