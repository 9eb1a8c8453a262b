package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// msgConn carries whole JSON-RPC messages between harness and one server:
// a transport (stdio, streamable HTTP, the older HTTP+SSE).
type msgConn interface {
	// write sends one message; ctx bounds it (and, over HTTP, the stream
	// that carries a request's answer).
	write(ctx context.Context, msg []byte) error
	// read returns the next message from the server; an error ends the
	// session.
	read() ([]byte, error)
	// close ends the connection; read then returns an error.
	close() error
}

// versioned is a transport that sends the negotiated protocol version
// with every request after initialize (streamable HTTP's header).
type versioned interface{ setProtocolVersion(string) }

// errClosed is a session that ended: the server's process exited, its
// connection closed, or harness closed it.
var errClosed = errors.New("connection closed")

// rpcError is the server's JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (JSON-RPC error %d; data %s)", e.Message, e.Code, clip(string(e.Data), 200))
	}
	return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code)
}

// JSON-RPC error codes harness sends.
const (
	codeMethodNotFound = -32601
	codeInvalidRequest = -32600
)

// malformedError is a message from the server that is not JSON-RPC.
type malformedError struct {
	line []byte
	err  error
}

func (e *malformedError) Error() string {
	return fmt.Sprintf("%v in %q", e.err, clip(string(e.line), 120))
}

func (e *malformedError) Unwrap() error { return e.err }

// wireMsg is any JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type outResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type reply struct {
	result json.RawMessage
	err    error
}

// rpcSession is harness's side of one JSON-RPC session with a server:
// requests matched to their answers by id (in any order), notifications
// handed to notify, the server's requests answered (ping; anything else
// "method not found": harness declares no client capabilities), a call
// whose context ends cancelled with notifications/cancelled. A message
// that is not JSON-RPC fails the calls in flight with a malformedError,
// one over maxMessage (discarded by the transport) with a tooLargeError,
// and the session goes on; an answer to no call in flight is dropped.
type rpcSession struct {
	conn   msgConn
	notify func(method string, params json.RawMessage)

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan reply
	err     error // why it ended, once done is closed
	done    chan struct{}

	init initializeResult
}

func newSession(c msgConn, notify func(string, json.RawMessage)) *rpcSession {
	s := &rpcSession{conn: c, notify: notify, pending: map[string]chan reply{}, done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *rpcSession) loop() {
	for {
		raw, err := s.conn.read()
		if isTooLarge(err) {
			// Discarded unread: which call it answered is not known.
			s.fail(err)
			continue
		}
		if err != nil {
			if !errors.Is(err, errClosed) {
				err = fmt.Errorf("%w: %w", errClosed, err)
			}
			s.end(err)
			return
		}
		s.handle(raw)
	}
}

// end closes the session for good; calls in flight and later fail with err.
func (s *rpcSession) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
}

// close ends the session and its connection.
func (s *rpcSession) close() {
	s.end(fmt.Errorf("%w by harness", errClosed))
	s.conn.close()
}

// idKey is an id as the pending map knows it: 7 and "7" are one.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (s *rpcSession) handle(raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	if raw[0] == '[' { // a batch (2025-03-26)
		var batch []json.RawMessage
		if err := json.Unmarshal(raw, &batch); err != nil {
			s.malformed(raw, err)
			return
		}
		for _, m := range batch {
			s.handle(m)
		}
		return
	}
	var m wireMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		s.malformed(raw, err)
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		go s.answer(m)
	case m.Method != "":
		if s.notify != nil {
			s.notify(m.Method, m.Params)
		}
	case hasID && (m.Result != nil || m.Error != nil):
		s.mu.Lock()
		ch := s.pending[idKey(m.ID)]
		delete(s.pending, idKey(m.ID))
		s.mu.Unlock()
		if ch == nil {
			return // an answer to a call no longer waited for (cancelled, timed out)
		}
		if m.Error != nil {
			ch <- reply{err: m.Error}
		} else {
			ch <- reply{result: m.Result}
		}
	default:
		s.malformed(raw, errors.New("neither a request, a notification nor a response"))
	}
}

// malformed fails every call in flight: which one the line was meant to
// answer is not known, and waiting would wait for ever.
func (s *rpcSession) malformed(raw []byte, err error) {
	s.fail(&malformedError{line: slices.Clone(raw), err: err})
}

// fail fails every call in flight with err; the session goes on.
func (s *rpcSession) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ch := range s.pending {
		ch <- reply{err: err}
		delete(s.pending, k)
	}
}

// answer answers a request of the server's.
func (s *rpcSession) answer(m wireMsg) {
	resp := outResponse{JSONRPC: "2.0", ID: m.ID}
	switch m.Method {
	case "ping":
		resp.Result = struct{}{}
	default:
		resp.Error = &rpcError{Code: codeMethodNotFound, Message: "harness does not offer " + m.Method}
	}
	raw, err := json.Marshal(resp)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.conn.write(ctx, raw)
}

// call sends a request and waits for its answer, decoded into result.
func (s *rpcSession) call(ctx context.Context, method string, params, result any) error {
	id := s.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	s.pending[key] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, key)
		s.mu.Unlock()
	}()
	raw, err := json.Marshal(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return err
	}
	if err := s.conn.write(ctx, raw); err != nil {
		if ctx.Err() != nil {
			s.cancel(id, ctx)
			return ctx.Err()
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w (sending %s: %v)", s.err, method, err)
		default:
		}
		return err
	}
	select {
	case r := <-ch:
		return decodeReply(r, result)
	case <-ctx.Done():
		s.cancel(id, ctx)
		return ctx.Err()
	case <-s.done:
		select {
		case r := <-ch:
			return decodeReply(r, result)
		default:
		}
		return s.err
	}
}

func decodeReply(r reply, result any) error {
	if r.err != nil {
		return r.err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(r.result, result); err != nil {
		return &malformedError{line: r.result, err: err}
	}
	return nil
}

// cancel tells the server a call is no longer waited for.
func (s *rpcSession) cancel(id int64, ctx context.Context) {
	reason := "cancelled"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "timed out"
	}
	go func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.notifyServer(cctx, "notifications/cancelled", cancelledParams{RequestID: json.RawMessage(strconv.FormatInt(id, 10)), Reason: reason})
	}()
}

// notifyServer sends a notification.
func (s *rpcSession) notifyServer(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(outNotification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return s.conn.write(ctx, raw)
}

// initialize is the handshake: harness's version and (no) capabilities,
// the server's version checked, then notifications/initialized.
func (s *rpcSession) initialize(ctx context.Context) error {
	var res initializeResult
	err := s.call(ctx, "initialize", initializeParams{ProtocolVersion: protocolVersion, Capabilities: json.RawMessage(`{}`),
		ClientInfo: implementation{Name: "harness", Version: "1"}}, &res)
	if err != nil {
		return err
	}
	if !slices.Contains(supportedVersions, res.ProtocolVersion) {
		return fmt.Errorf("the server speaks MCP version %q, which harness does not (it speaks %s)", res.ProtocolVersion, strings.Join(supportedVersions, ", "))
	}
	s.init = res
	if v, ok := s.conn.(versioned); ok {
		v.setProtocolVersion(res.ProtocolVersion)
	}
	return s.notifyServer(ctx, "notifications/initialized", nil)
}

// lineConn is the stdio transport's framing: one JSON message per line,
// of maxMessage at most.
type lineConn struct {
	r   *bufio.Reader
	rc  io.Closer
	w   io.WriteCloser
	wmu sync.Mutex
	// broken is set once a write was cut off in the middle of a message.
	broken error
	// skip is set while the rest of a line over maxMessage is discarded.
	skip bool
}

func newLineConn(r io.ReadCloser, w io.WriteCloser) *lineConn {
	return &lineConn{r: bufio.NewReaderSize(r, 64<<10), rc: r, w: w}
}

func (c *lineConn) read() ([]byte, error) {
	for {
		line, err := c.line()
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// line reads one line of maxMessage at most. A longer one is a
// tooLargeError as soon as it goes over, without waiting for its end: the
// next call first discards the rest of it, a buffer at a time.
func (c *lineConn) line() ([]byte, error) {
	for skipped := int64(0); c.skip; {
		frag, err := c.r.ReadSlice('\n')
		switch {
		case err == nil:
			c.skip = false
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
		// A line without end is no server worth reading on: the session
		// ends, and the server, writing to a pipe no one reads, waits.
		if skipped += int64(len(frag)); skipped > maxDiscard {
			return nil, fmt.Errorf("%w: the server sent a line of more than %d GiB; harness stopped reading it", errClosed, maxDiscard>>30)
		}
	}
	var line []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		if len(line)+len(frag) > maxMessage {
			c.skip = errors.Is(err, bufio.ErrBufferFull)
			return nil, &tooLargeError{what: "a message"}
		}
		line = append(grow(line, len(frag)), frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (c *lineConn) write(ctx context.Context, msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if f, ok := c.w.(*os.File); ok {
		// A server that stops reading its stdin fills the pipe: the
		// write gives up when ctx ends.
		stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Now()) })
		defer func() {
			if !stop() {
				f.SetWriteDeadline(time.Time{})
			}
		}()
	}
	if c.broken != nil {
		return c.broken
	}
	line := append(msg, '\n')
	if n, err := c.w.Write(line); err != nil {
		if n > 0 {
			// Half a message on the pipe: nothing after it would parse.
			// The server gets EOF on its stdin.
			c.broken = fmt.Errorf("%w: a message to the server was cut off after %d of %d bytes (%v)", errClosed, n, len(line), err)
			c.w.Close()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A pipe that takes no more: the server is gone (or going).
		return fmt.Errorf("%w: %w", errClosed, err)
	}
	return nil
}

func (c *lineConn) close() error {
	err := c.w.Close()
	c.rc.Close()
	return err
}
