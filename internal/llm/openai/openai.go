package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
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
	// Profile forces a server profile by name (OPENAI_PROFILE, one of
	// ProfileNames); "" chooses one by host, then by model family.
	Profile string
}

// Provider talks to a Chat Completions endpoint. It is safe for concurrent
// use.
type Provider struct {
	x       llm.Exchange
	baseURL string
	forced  *Profile
	now     func() time.Time

	// learned holds what the server's own errors taught this session, so
	// every later request is sent as the server accepts it.
	mu      sync.Mutex
	learned map[string]bool // field -> dropped

	// local is set for a server on this machine, which may cut prompts
	// from the front (see checkTruncation); warnedTruncation once said so.
	local            bool
	warnedTruncation bool
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. A base URL with no path gets /v1, so
// http://localhost:8080 (llama.cpp) works as well as
// http://localhost:11434/v1 (Ollama). An unknown cfg.Profile is an error
// naming the known ones.
func New(cfg Config) *Provider {
	p, _ := NewChecked(cfg)
	return p
}

// NewChecked is New that reports an unknown profile name instead of
// ignoring it.
func NewChecked(cfg Config) (*Provider, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err == nil && u.Path == "" {
		base += "/v1"
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	p := &Provider{baseURL: base, now: time.Now, learned: map[string]bool{}, local: IsLocal(base)}
	var err error
	if cfg.Profile != "" {
		if prof, ok := ProfileNamed(cfg.Profile); ok {
			p.forced = &prof
		} else {
			err = fmt.Errorf("OPENAI_PROFILE=%q is not a known server profile: use one of %s", cfg.Profile, strings.Join(ProfileNames(), ", "))
		}
	}
	p.x = llm.Exchange{
		Name: "openai", Client: client, Endpoint: base + "/chat/completions", Header: h, Key: cfg.APIKey,
		StatusError: p.statusError, Stream: parseStream, Decode: DecodeResponse,
		IdleTimeout: cfg.IdleTimeout,
	}
	return p, err
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "openai" }

// Profile is the profile requests for model are sent with now: the forced
// or chosen one, less what the server rejected this session.
func (p *Provider) Profile(model string) Profile {
	var prof Profile
	if p.forced != nil {
		prof = forModel(*p.forced, model)
	} else {
		prof = ChooseProfile(p.baseURL, model)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for f := range p.learned {
		learnable[f](&prof)
	}
	return prof
}

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return llm.MarshalBody(buildRequest(req, p.Profile(req.Model)))
}

// maxLearn bounds how many fields one request may learn to drop: each
// retry must have dropped something new, so this only caps a server that
// rejects field after field.
const maxLearn = 4

// Stream implements llm.Provider. A 400 that names a field this server does
// not accept drops the field for the rest of the session and sends the
// request again at once, with one EventNotice saying so.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	for tries := 0; ; tries++ {
		prof := p.Profile(req.Model)
		body, err := llm.MarshalBody(buildRequest(req, prof))
		if err != nil {
			return nil, fmt.Errorf("openai: encode request: %w", err)
		}
		reply, err := p.x.Do(ctx, body, onEvent)
		if err == nil && p.local && (prof.Name == "ollama" || prof.Name == "llamacpp") {
			// Ollama truncates silently; so do llama.cpp builds with
			// context shift. vLLM and the others answer 400 instead.
			p.checkTruncation(body, reply, onEvent)
		}
		if err == nil || tries >= maxLearn {
			return reply, err
		}
		var e *llm.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		f, ok := rejectedField(e)
		if !ok || !p.learn(f, prof) {
			return nil, err
		}
		if onEvent != nil {
			onEvent(llm.Event{Type: llm.EventNotice, Text: describeLearned(f), Err: err})
		}
	}
}

// learn records that the server rejects field, when dropping it changes
// the request sent with prof.
func (p *Provider) learn(field string, prof Profile) bool {
	if !learnable[field](&prof) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.learned[field] {
		return false
	}
	p.learned[field] = true
	return true
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
