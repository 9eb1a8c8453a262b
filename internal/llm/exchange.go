package llm

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
)

// Exchange is the HTTP half of an adapter: post a request body, classify a
// failed answer, and hand a good one to the adapter's decoder. Both wire
// formats share it, so a transport failure means the same thing whichever
// provider is in use, and the API key is kept out of every error in one
// place.
type Exchange struct {
	Name     string // "anthropic" or "openai", prefixing local errors
	Client   *http.Client
	Endpoint string
	Header   http.Header // authentication and version headers
	Key      string      // redacted from every error's text

	// StatusError reads a non-2xx answer's body (in the provider's own
	// error format) into a classified error, usually through StatusError.
	StatusError func(resp *http.Response, body []byte) *Error
	// Stream decodes an SSE body; Decode a whole JSON body, which some
	// servers send even to a streaming request.
	Stream func(r io.Reader, onEvent func(Event)) (*Reply, error)
	Decode func(body []byte, onEvent func(Event)) (*Reply, error)
}

// maxErrorBody bounds how much of a failed answer is read.
const maxErrorBody = 64 << 10

// Do posts body and returns the decoded reply. A cancelled ctx is returned
// as ctx.Err(); every other failure is an *Error.
func (x *Exchange) Do(ctx context.Context, body []byte, onEvent func(Event)) (*Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", x.Name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, vs := range x.Header {
		req.Header[k] = vs
	}
	resp, err := x.Client.Do(req)
	if err != nil {
		return nil, x.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, x.redact(x.StatusError(resp, data))
	}
	var reply *Reply
	if isJSON(resp.Header.Get("Content-Type")) {
		data, rerr := io.ReadAll(resp.Body)
		if rerr != nil {
			return nil, x.transportError(ctx, rerr)
		}
		reply, err = x.Decode(data, onEvent)
	} else {
		reply, err = x.Stream(resp.Body, onEvent)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, x.redact(err)
	}
	return reply, nil
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// transportError classifies a failure to send or read: cancellation is
// returned as is, a refused connection (a local server not running) is not
// worth retrying, anything else is a cut stream, retried as a fresh request.
func (x *Exchange) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return x.redact(&Error{Kind: ErrUnknown, Message: "cannot connect to " + x.Endpoint + "; is the server running and the base URL right?", Err: err})
	}
	return x.redact(&Error{Kind: ErrStreamCut, Err: err})
}

// redact keeps the API key out of an error's text.
func (x *Exchange) redact(err error) error {
	var e *Error
	if !errors.As(err, &e) || x.Key == "" {
		return err
	}
	e.Message = Redact(e.Message, x.Key)
	if e.Err != nil && strings.Contains(e.Err.Error(), x.Key) {
		e.Err = errors.New(Redact(e.Err.Error(), x.Key))
	}
	return err
}

// MarshalBody encodes a wire request without HTML escaping, so code in
// prompts travels as written (and the bytes stay the same turn after turn).
func MarshalBody(w any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// ClipMessage bounds a provider's error message for display.
func ClipMessage(msg string) string {
	if len(msg) > 2000 {
		return msg[:2000] + "…"
	}
	return msg
}
