package mcp

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
	"sync"
	"time"
)

// errSessionExpired is a streamable HTTP server's 404 to a request that
// carried its session id: the server forgot the session.
var errSessionExpired = errors.New("the server ended the session (HTTP 404 for its session id)")

// inbox is the messages an HTTP transport received, for read, and the
// over-long ones it discarded (a tooLargeError each, which fails the calls
// in flight and does not end the session).
type inbox struct {
	ch   chan inMsg
	done chan struct{}
	once sync.Once
	err  error
}

type inMsg struct {
	msg []byte
	err error
}

func newInbox() *inbox { return &inbox{ch: make(chan inMsg, 16), done: make(chan struct{})} }

func (b *inbox) push(msg []byte) bool { return b.send(inMsg{msg: msg}) }

// pushErr delivers a discarded message's error to read.
func (b *inbox) pushErr(err error) bool { return b.send(inMsg{err: err}) }

func (b *inbox) send(m inMsg) bool {
	select {
	case b.ch <- m:
		return true
	case <-b.done:
		return false
	}
}

func (b *inbox) read() ([]byte, error) {
	select {
	case m := <-b.ch:
		return m.msg, m.err
	case <-b.done:
		select {
		case m := <-b.ch:
			return m.msg, m.err
		default:
		}
		return nil, b.err
	}
}

func (b *inbox) shut(err error) {
	b.once.Do(func() {
		b.err = err
		close(b.done)
	})
}

// pushBody delivers a JSON body (one message or a batch).
func (b *inbox) pushBody(body []byte) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if !json.Valid(body) {
		return &malformedError{line: body, err: errors.New("not JSON")}
	}
	b.push(body)
	return nil
}

// streamableConn is the streamable HTTP transport: every message a POST
// to the server's one URL, whose answer is JSON or an event stream; the
// session id the server gives at initialize sent back on every request,
// the protocol version after it; server messages outside a request on a
// GET stream, where the server offers one (405: none); DELETE at close.
// A 401 (or 403 insufficient_scope) runs the OAuth flow once and retries.
type streamableConn struct {
	url    string
	client *http.Client
	auth   *oauthState // nil: no OAuth (or the configuration gives its own Authorization)
	ctx    context.Context
	cancel context.CancelFunc
	in     *inbox
	wg     sync.WaitGroup

	mu        sync.Mutex
	sessionID string
	version   string
	closing   bool
}

func newStreamable(ctx context.Context, u string, client *http.Client, auth *oauthState) *streamableConn {
	cctx, cancel := context.WithCancel(ctx)
	return &streamableConn{url: u, client: client, auth: auth, ctx: cctx, cancel: cancel, in: newInbox()}
}

func (c *streamableConn) setProtocolVersion(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}

func (c *streamableConn) read() ([]byte, error) { return c.in.read() }

// do sends one request with the session's headers and the OAuth token,
// running the OAuth flow once on a 401.
func (c *streamableConn) do(ctx context.Context, method string, body []byte, accept string, extra http.Header) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.url, rd)
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		c.mu.Lock()
		if c.sessionID != "" {
			req.Header.Set("Mcp-Session-Id", c.sessionID)
		}
		if c.version != "" {
			req.Header.Set("MCP-Protocol-Version", c.version)
		}
		c.mu.Unlock()
		for k, v := range extra {
			req.Header[k] = v
		}
		sent := ""
		if c.auth != nil {
			if sent = c.auth.token(); sent != "" {
				req.Header.Set("Authorization", "Bearer "+sent)
			}
		}
		resp, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		challenged := resp.StatusCode == http.StatusUnauthorized ||
			resp.StatusCode == http.StatusForbidden && strings.Contains(resp.Header.Get("WWW-Authenticate"), "insufficient_scope")
		if !challenged || c.auth == nil || attempt > 0 {
			return resp, nil
		}
		drain(resp)
		if err := c.auth.authorize(ctx, resp, sent); err != nil {
			return nil, err
		}
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func mediaType(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt
}

// httpError is a response that is not the protocol's.
func httpError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	resp.Body.Close()
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return fmt.Errorf("HTTP %s: %s", resp.Status, msg)
}

func (c *streamableConn) write(ctx context.Context, msg []byte) error {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(msg, &head)
	request := head.Method != "" && len(head.ID) > 0
	// The request, and the stream that answers it, end with the call or
	// with the connection.
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	done := func() {
		stop()
		cancel()
	}
	resp, err := c.do(ctx, http.MethodPost, msg, "application/json, text/event-stream", nil)
	if err != nil {
		done()
		return err
	}
	streaming := false
	defer func() {
		if !streaming {
			done()
		}
	}()
	c.mu.Lock()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && c.sessionID == "" && head.Method == "initialize" {
		c.sessionID = id
	}
	sid := c.sessionID
	c.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		drain(resp)
		c.in.shut(fmt.Errorf("%w: %w", errClosed, errSessionExpired))
		return errSessionExpired
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return httpError(resp)
	case resp.StatusCode == http.StatusAccepted && request:
		drain(resp)
		c.in.push(errorReply(head.ID, "the server accepted the request (HTTP 202) without answering it"))
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		drain(resp)
	case mediaType(resp) == "text/event-stream":
		streaming = c.spawn(func() {
			defer done()
			c.requestStream(ctx, resp, head.ID, request)
		})
		if !streaming {
			resp.Body.Close()
		}
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
		resp.Body.Close()
		if err != nil {
			return err
		}
		if len(body) > maxMessage {
			return &tooLargeError{what: "an HTTP answer"}
		}
		if err := c.in.pushBody(body); err != nil {
			return err
		}
	}
	if head.Method == "notifications/initialized" {
		c.spawn(c.listen)
	}
	return nil
}

// spawn runs f in a goroutine close waits for, unless close began.
func (c *streamableConn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// requestStream reads the event stream that answers one request. A
// stream that breaks before the answer is resumed from its last event id
// (GET with Last-Event-ID), twice at most; then the call fails.
func (c *streamableConn) requestStream(ctx context.Context, resp *http.Response, id json.RawMessage, request bool) {
	answered := false
	var last string
	for tries := 0; ; tries++ {
		l, _, err := c.readStream(resp.Body, func(msg []byte) {
			if request && answers(msg, id) {
				answered = true
			}
		})
		resp.Body.Close()
		if l != "" {
			last = l
		}
		if !request || answered || ctx.Err() != nil || c.ctx.Err() != nil {
			return
		}
		if last == "" || tries >= 2 {
			why := "the server's event stream ended before its answer"
			if err != nil && !errors.Is(err, io.EOF) {
				why += ": " + err.Error()
			}
			c.in.push(errorReply(id, why))
			return
		}
		time.Sleep(100 * time.Millisecond)
		resp, err = c.do(ctx, http.MethodGet, nil, "text/event-stream", http.Header{"Last-Event-Id": {last}})
		if err != nil || resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			why := "the server's event stream ended before its answer, and resuming it failed"
			if err != nil {
				why += ": " + err.Error()
			} else {
				why += ": " + httpError(resp).Error()
			}
			c.in.push(errorReply(id, why))
			return
		}
	}
}

// answers reports whether msg is the response to id.
func answers(msg []byte, id json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && idKey(m.ID) == idKey(id)
}

// errorReply is a JSON-RPC error answer to id that the transport makes
// up, so the call waiting for it fails instead of waiting for ever.
func errorReply(id json.RawMessage, why string) []byte {
	raw, _ := json.Marshal(outResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: -32000, Message: why}})
	return raw
}

// readStream delivers a stream's messages; it returns the last event id
// and retry delay it saw.
func (c *streamableConn) readStream(body io.Reader, seen func([]byte)) (string, int, error) {
	r := newSSEReader(body)
	for {
		ev, err := r.next()
		if isTooLarge(err) {
			if !c.in.pushErr(err) {
				return r.id, r.retry, errClosed
			}
			continue // the event was discarded; the stream goes on
		}
		if err != nil {
			return r.id, r.retry, err
		}
		if ev.Name != "message" || strings.TrimSpace(ev.Data) == "" {
			continue // a priming event (an id, no data) or one harness does not know
		}
		msg := []byte(ev.Data)
		if seen != nil {
			seen(msg)
		}
		if !c.in.push(msg) {
			return r.id, r.retry, errClosed
		}
	}
}

// listen keeps the GET stream of the server's own messages open, for the
// session's life, where the server offers one.
func (c *streamableConn) listen() {
	var last string
	failures := 0
	for c.ctx.Err() == nil {
		var hdr http.Header
		if last != "" {
			hdr = http.Header{"Last-Event-Id": {last}}
		}
		resp, err := c.do(c.ctx, http.MethodGet, nil, "text/event-stream", hdr)
		if err != nil {
			failures++
		} else if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			drain(resp)
			return // 405: the server offers no such stream
		} else {
			failures = 0
			l, retry, _ := c.readStream(resp.Body, nil)
			resp.Body.Close()
			if l != "" {
				last = l
			}
			if retry > 0 {
				sleepCtx(c.ctx, time.Duration(retry)*time.Millisecond)
				continue
			}
		}
		if failures > 5 {
			return
		}
		sleepCtx(c.ctx, time.Duration(failures+1)*time.Second)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// close ends the session on the server (DELETE), then the streams.
func (c *streamableConn) close() error {
	c.mu.Lock()
	sid := c.sessionID
	c.mu.Unlock()
	if sid != "" && c.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		if resp, err := c.do(ctx, http.MethodDelete, nil, "", nil); err == nil {
			drain(resp)
		}
		cancel()
	}
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.cancel()
	c.in.shut(fmt.Errorf("%w by harness", errClosed))
	c.wg.Wait()
	return nil
}

// sseConn is the older HTTP+SSE transport (protocol version 2024-11-05):
// a GET event stream whose first event, "endpoint", names the URL the
// client POSTs its messages to; every server message comes on the stream.
type sseConn struct {
	client   *http.Client
	endpoint string
	ctx      context.Context
	cancel   context.CancelFunc
	in       *inbox
	done     chan struct{}
}

// dialSSE opens the stream and waits (within ctx) for its endpoint; the
// stream lives in life.
func dialSSE(ctx, life context.Context, u string, client *http.Client) (*sseConn, error) {
	cctx, cancel := context.WithCancel(life)
	c := &sseConn{client: client, ctx: cctx, cancel: cancel, in: newInbox(), done: make(chan struct{})}
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
		cancel()
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("the server answered the event stream's GET with %q, not text/event-stream", resp.Header.Get("Content-Type"))
		}
		return nil, httpError(resp)
	}
	base := resp.Request.URL
	r := newSSEReader(resp.Body)
	for {
		ev, err := r.next()
		if err != nil {
			resp.Body.Close()
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("the event stream ended before its endpoint event: %w", err)
		}
		if ev.Name != "endpoint" {
			continue
		}
		ep, err := base.Parse(strings.TrimSpace(ev.Data))
		if err == nil && !sameOrigin(ep, base) {
			err = errors.New("not on the stream's origin " + base.Scheme + "://" + base.Host)
		}
		if err != nil {
			resp.Body.Close()
			cancel()
			return nil, fmt.Errorf("the endpoint event's URL %q: %w", ev.Data, err)
		}
		c.endpoint = ep.String()
		break
	}
	go func() {
		defer close(c.done)
		defer resp.Body.Close()
		for {
			ev, err := r.next()
			if isTooLarge(err) {
				if !c.in.pushErr(err) {
					return
				}
				continue // the event was discarded; the stream goes on
			}
			if err != nil {
				c.in.shut(fmt.Errorf("%w: the event stream ended: %v", errClosed, err))
				return
			}
			if ev.Name == "message" && strings.TrimSpace(ev.Data) != "" {
				if !c.in.push([]byte(ev.Data)) {
					return
				}
			}
		}
	}()
	return c, nil
}

func (c *sseConn) read() ([]byte, error) { return c.in.read() }

func (c *sseConn) write(ctx context.Context, msg []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return httpError(resp)
	}
	drain(resp)
	return nil
}

func (c *sseConn) close() error {
	c.cancel()
	c.in.shut(fmt.Errorf("%w by harness", errClosed))
	<-c.done
	return nil
}

// sameOrigin reports whether two URLs share scheme and host.
func sameOrigin(a, b *url.URL) bool { return a.Scheme == b.Scheme && a.Host == b.Host }
