package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider. A BaseURL with no path gets /v1 added
// (http://localhost:8080 for llama.cpp); one with a path is used as given
// (http://localhost:11434/v1, https://openrouter.ai/api/v1). HTTPClient
// defaults to a client without a total timeout (cancel through the context).
type Config struct {
	BaseURL    string
	APIKey     string
	HTTPClient *http.Client
	// IdleTimeout ends a request on which nothing arrived for that long as
	// a cut stream (retried); 0 means llm.DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Provider talks to a Chat Completions endpoint. It is safe for concurrent
// use.
type Provider struct {
	x        llm.Exchange
	official bool // api.openai.com: max_completion_tokens
	now      func() time.Time
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. A base URL with no path gets /v1, so
// http://localhost:8080 (llama.cpp) works as well as
// http://localhost:11434/v1 (Ollama).
func New(cfg Config) *Provider {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	official := false
	if u, err := url.Parse(base); err == nil {
		if u.Path == "" {
			base += "/v1"
		}
		official = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	p := &Provider{official: official, now: time.Now}
	p.x = llm.Exchange{
		Name: "openai", Client: client, Endpoint: base + "/chat/completions", Header: h, Key: cfg.APIKey,
		StatusError: p.statusError, Stream: parseStream, Decode: DecodeResponse,
		IdleTimeout: cfg.IdleTimeout,
	}
	return p
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "openai" }

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return llm.MarshalBody(buildRequest(req, p.official))
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	body, err := p.MarshalRequest(req)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	return p.x.Do(ctx, body, onEvent)
}

// statusError reads an error answer in any of the shapes servers use.
func (p *Provider) statusError(resp *http.Response, data []byte) *llm.Error {
	// OpenAI: {"error":{"message","type","code"}}; vLLM: {"message","type","code"};
	// llama.cpp: {"error":{"code":400,"message","type"}}; some send a bare string.
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	errType, msg := "", llm.PlainBody(data)
	// Gemini's OpenAI endpoint wraps its error in an array:
	// [{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}].
	var arr []json.RawMessage
	if json.Unmarshal(data, &arr) == nil && len(arr) > 0 {
		data = arr[0]
	}
	if json.Unmarshal(data, &w) == nil {
		var we wireError
		var s string
		switch {
		case len(w.Error) > 0 && json.Unmarshal(w.Error, &we) == nil && we.Message != "":
			code, _ := we.code()
			errType, msg = strings.TrimSpace(we.Type+" "+code), we.Message
		case len(w.Error) > 0 && json.Unmarshal(w.Error, &s) == nil:
			msg = s
		case w.Message != "":
			errType, msg = w.Type, w.Message
		}
	}
	if strings.Contains(errType, "insufficient_quota") {
		errType = "insufficient_quota"
	}
	return llm.StatusError(resp.StatusCode, resp.Header, errType, llm.ClipMessage(msg), p.now())
}
