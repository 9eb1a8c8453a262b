package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"syscall"
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
}

// Provider talks to a Chat Completions endpoint. It is safe for concurrent
// use.
type Provider struct {
	endpoint string
	official bool // api.openai.com: max_completion_tokens
	key      string
	client   *http.Client
	now      func() time.Time
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
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
	return &Provider{endpoint: base + "/chat/completions", official: official, key: cfg.APIKey, client: client, now: time.Now}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "openai" }

// MarshalRequest returns the exact body Stream sends for req.
func (p *Provider) MarshalRequest(req *llm.Request) ([]byte, error) {
	return marshal(buildRequest(req, p.official))
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	body, err := p.MarshalRequest(req)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, p.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, p.statusError(resp)
	}
	var reply *llm.Reply
	if isJSON(resp.Header.Get("Content-Type")) {
		data, rerr := io.ReadAll(resp.Body)
		if rerr != nil {
			return nil, p.transportError(ctx, rerr)
		}
		reply, err = DecodeResponse(data, onEvent)
	} else {
		reply, err = parseStream(resp.Body, onEvent)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, p.redact(err)
	}
	return reply, nil
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// transportError classifies a failure to send or read: cancellation is
// returned as is, a refused connection (a local server not running) is not
// worth retrying, anything else is a cut stream.
func (p *Provider) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return p.redact(&llm.Error{Kind: llm.ErrUnknown, Message: "cannot connect to " + p.endpoint + "; is the server running and the base URL right?", Err: err})
	}
	return p.redact(&llm.Error{Kind: llm.ErrStreamCut, Err: err})
}

func (p *Provider) statusError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	// OpenAI: {"error":{"message","type","code"}}; vLLM: {"message","type","code"};
	// llama.cpp: {"error":{"code":400,"message","type"}}; some send a bare string.
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	errType, msg := "", strings.TrimSpace(string(data))
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
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	if strings.Contains(errType, "insufficient_quota") {
		errType = "insufficient_quota"
	}
	return p.redact(llm.StatusError(resp.StatusCode, resp.Header, errType, msg, p.now()))
}

// redact keeps the API key out of an error's text.
func (p *Provider) redact(err error) error {
	var e *llm.Error
	if !errors.As(err, &e) || p.key == "" {
		return err
	}
	e.Message = llm.Redact(e.Message, p.key)
	if e.Err != nil && strings.Contains(e.Err.Error(), p.key) {
		e.Err = errors.New(llm.Redact(e.Err.Error(), p.key))
	}
	return err
}
