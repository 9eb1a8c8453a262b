package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// DefaultBaseURL is the public Messages API.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header the wire structs follow.
const APIVersion = "2023-06-01"

// Config configures a Provider. BaseURL may be given with or without a
// trailing /v1; HTTPClient defaults to a client without a total timeout
// (streams are long; cancel through the context).
type Config struct {
	BaseURL    string
	APIKey     string
	HTTPClient *http.Client
	// IdleTimeout ends a request on which nothing arrived for that long as
	// a cut stream (retried); 0 means llm.DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Provider talks to the Messages API. It is safe for concurrent use.
type Provider struct {
	x   llm.Exchange
	now func() time.Time
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg.
func New(cfg Config) *Provider {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	base = strings.TrimSuffix(base, "/v1")
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	h := http.Header{}
	h.Set("anthropic-version", APIVersion)
	if cfg.APIKey != "" {
		h.Set("x-api-key", cfg.APIKey)
	}
	p := &Provider{now: time.Now}
	p.x = llm.Exchange{
		Name: "anthropic", Client: client, Endpoint: base + "/v1/messages", Header: h, Key: cfg.APIKey,
		StatusError: p.statusError, Stream: parseStream, Decode: DecodeResponse,
		IdleTimeout: cfg.IdleTimeout,
	}
	return p
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "anthropic" }

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	body, err := p.MarshalRequest(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	x := p.x
	if req.Thinking.DropBlock {
		// The binding control is a beta: without the header the API
		// rejects the field.
		x.Header = x.Header.Clone()
		x.Header.Add("anthropic-beta", BetaThinkingBinding)
	}
	return x.Do(ctx, body, onEvent)
}

// replay sends the events a stream would have sent for a whole response.
func replay(r *llm.Reply, onEvent func(llm.Event)) {
	if onEvent == nil {
		return
	}
	for i := range r.Message.Blocks {
		b := &r.Message.Blocks[i]
		switch b.Type {
		case llm.BlockThinking:
			onEvent(llm.Event{Type: llm.EventThinking, Text: b.Thinking})
		case llm.BlockText:
			onEvent(llm.Event{Type: llm.EventText, Text: b.Text})
		case llm.BlockToolUse:
			c := *b
			onEvent(llm.Event{Type: llm.EventToolCall, Block: &c})
		}
	}
}

// statusError reads an error answer: {"type":"error","error":{"type","message"}}.
func (p *Provider) statusError(resp *http.Response, data []byte) *llm.Error {
	var w struct {
		Error *wireError `json:"error"`
	}
	errType, msg := "", llm.PlainBody(data)
	if json.Unmarshal(data, &w) == nil && w.Error != nil {
		errType, msg = w.Error.Type, w.Error.Message
	}
	return llm.StatusError(resp.StatusCode, resp.Header, errType, llm.ClipMessage(msg), p.now())
}
