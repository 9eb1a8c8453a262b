package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"syscall"
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
}

// Provider talks to the Messages API. It is safe for concurrent use.
type Provider struct {
	endpoint string
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
	base = strings.TrimSuffix(base, "/v1")
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Provider{endpoint: base + "/v1/messages", key: cfg.APIKey, client: client, now: time.Now}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return "anthropic" }

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onEvent func(llm.Event)) (*llm.Reply, error) {
	body, err := p.MarshalRequest(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("anthropic-version", APIVersion)
	if p.key != "" {
		hreq.Header.Set("x-api-key", p.key)
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

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// transportError classifies a failure to send or read: cancellation is
// returned as is, a refused connection is not worth retrying, anything else
// is a cut stream.
func (p *Provider) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return p.redact(&llm.Error{Kind: llm.ErrUnknown, Message: "cannot connect to " + p.endpoint + "; check the base URL", Err: err})
	}
	return p.redact(&llm.Error{Kind: llm.ErrStreamCut, Err: err})
}

func (p *Provider) statusError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var w struct {
		Error *wireError `json:"error"`
	}
	errType, msg := "", strings.TrimSpace(string(data))
	if json.Unmarshal(data, &w) == nil && w.Error != nil {
		errType, msg = w.Error.Type, w.Error.Message
	}
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
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
