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
	"time"

	"github.com/harness-dev/harness/internal/llm/sse"
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

	// IdleTimeout ends an exchange on which nothing arrived for that long
	// (no headers, no bytes of the stream) as a cut stream, which WithRetry
	// retries fresh. 0 means DefaultIdleTimeout; negative, none.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is generous: reasoning models may think for minutes
// before the first token, while Anthropic pings every few seconds. Without
// it, a server that stops sending without closing would hang the session.
const DefaultIdleTimeout = 5 * time.Minute

// errStalled is the cause of a request cancelled by the idle watchdog.
var errStalled = errors.New("stalled")

// idleReader restarts the watchdog on every read that returns data.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.timer.Reset(i.d)
	}
	return n, err
}

// maxErrorBody bounds how much of a failed answer is read.
const maxErrorBody = 64 << 10

// maxJSONReply bounds a reply sent whole as JSON (read, then decoded): as
// much as the one event of a stream that carries a whole reply. maxStream
// bounds the bytes of a streamed reply (128k tokens, one chunk each, stream
// some 32 MB in the most verbose format); a line or an event of it is
// bounded by package sse. Past either the exchange fails, not retried,
// with an error naming the limit.
const (
	maxJSONReply = sse.MaxEvent
	maxStream    = 128 << 20
)

// errTooLarge is an answer past maxJSONReply or maxStream.
var errTooLarge = errors.New("answer over the limit")

// boundedReader reads n bytes at most; past them, it fails with errTooLarge.
type boundedReader struct {
	r io.Reader
	n int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.n+1 {
		p = p[:b.n+1]
	}
	k, err := b.r.Read(p)
	if b.n -= int64(k); b.n < 0 {
		return 0, errTooLarge
	}
	return k, err
}

// tooLarge is the error for an answer over its limit (limit bytes).
func (x *Exchange) tooLarge(what string, limit int) *Error {
	return &Error{Kind: ErrUnknown, Message: fmt.Sprintf("%s sent %s over %d MiB, the limit harness reads from a provider; the answer was dropped (not retried: it would come again)", x.Endpoint, what, limit>>20)}
}

// Do posts body and returns the decoded reply. A cancelled ctx is returned
// as ctx.Err(); every other failure is an *Error.
func (x *Exchange) Do(ctx context.Context, body []byte, onEvent func(Event)) (*Reply, error) {
	idle := x.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if idle > 0 {
		timer = time.AfterFunc(idle, func() { cancel(errStalled) })
		defer timer.Stop()
	}
	// stalled turns a watchdog cancellation into a retryable cut stream;
	// the caller's own cancellation stays a cancellation.
	stalled := func() error {
		if parent.Err() == nil && errors.Is(context.Cause(ctx), errStalled) {
			return &Error{Kind: ErrStreamCut, Message: fmt.Sprintf("nothing arrived from %s for %s", x.Endpoint, idle)}
		}
		return nil
	}
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
		if serr := stalled(); serr != nil {
			return nil, serr
		}
		return nil, x.transportError(parent, err)
	}
	defer resp.Body.Close()
	var bodyR io.Reader = resp.Body
	if timer != nil {
		bodyR = &idleReader{r: resp.Body, timer: timer, d: idle}
	}
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(bodyR, maxErrorBody))
		if isHTML(resp.Header.Get("Content-Type"), data) && !proxyBusy(resp.StatusCode) {
			return nil, x.redact(x.notAPI(resp.StatusCode, data))
		}
		return nil, x.redact(x.StatusError(resp, data))
	}
	if ct := resp.Header.Get("Content-Type"); isHTML(ct, nil) {
		data, _ := io.ReadAll(io.LimitReader(bodyR, maxErrorBody))
		return nil, x.redact(x.notAPI(resp.StatusCode, data))
	}
	var reply *Reply
	if isJSON(resp.Header.Get("Content-Type")) {
		data, rerr := io.ReadAll(&boundedReader{r: bodyR, n: maxJSONReply})
		if errors.Is(rerr, errTooLarge) {
			return nil, x.redact(x.tooLarge("a JSON answer", maxJSONReply))
		}
		if rerr != nil {
			if serr := stalled(); serr != nil {
				return nil, serr
			}
			return nil, x.transportError(parent, rerr)
		}
		reply, err = x.Decode(data, onEvent)
	} else {
		reply, err = x.Stream(&boundedReader{r: bodyR, n: maxStream}, onEvent)
	}
	switch {
	case errors.Is(err, errTooLarge):
		return nil, x.redact(x.tooLarge("a stream", maxStream))
	}
	if tl := (*sse.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, x.redact(x.tooLarge("an event-stream "+tl.What, tl.Limit))
	}
	if err != nil {
		if serr := stalled(); serr != nil {
			return nil, serr
		}
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		return nil, x.redact(err)
	}
	return reply, nil
}

// isHTML reports whether an answer is a web page (by its type, or by its
// first bytes when it has none): a wrong BASE_URL, a login portal, a
// proxy's error page, never a model API.
func isHTML(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return true
	}
	low := strings.ToLower(strings.TrimSpace(string(body[:min(len(body), 64)])))
	return strings.HasPrefix(low, "<!doctype html") || strings.HasPrefix(low, "<html")
}

// proxyBusy reports the statuses whose HTML pages proxies in front of
// model servers serve under load (429, 503, 529, Cloudflare's 520–524):
// those stay retried as overloaded.
func proxyBusy(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == 529 || cloudflareRetryable(status)
}

// notAPI is the error for a web page where the API should answer: not
// retried, since asking again gets the same page.
func (x *Exchange) notAPI(status int, data []byte) *Error {
	what := "a web page"
	if t := PlainBody(data); strings.HasPrefix(t, "an HTML error page: ") {
		what += " (" + strings.TrimPrefix(t, "an HTML error page: ") + ")"
	}
	return &Error{Kind: ErrBadRequest, Status: status, Message: x.Endpoint + " answered " + what +
		", which does not look like the API: check the URL (BASE_URL, or --base-url); it usually ends in /v1 for OpenAI-compatible servers"}
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
