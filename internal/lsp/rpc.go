package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Bounds on what a server sends.
const (
	// maxMessage bounds one message's body: a publishDiagnostics for a
	// big file with many errors is well under it.
	maxMessage = 16 << 20
	// maxHeader bounds one header line.
	maxHeader = 4 << 10
)

// errClosed is a connection that ended: the server exited, its stdout
// closed or it broke the framing.
var errClosed = errors.New("the language server's connection closed")

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// JSON-RPC error codes harness sends.
const codeMethodNotFound = -32601

// wireMsg is any JSON-RPC 2.0 message.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// readMessage reads one Content-Length framed message (LSP's base
// protocol: headers, a blank line, the body).
func readMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("malformed header %q", clip(line, 80))
		}
		if strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			v = strings.TrimSpace(v)
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("malformed Content-Length %q", clip(v, 40))
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a message without Content-Length")
	}
	if length > maxMessage {
		return nil, fmt.Errorf("a message of %d bytes, over the %d-byte limit (maxMessage)", length, maxMessage)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a %d-byte message: %w", length, err)
	}
	return body, nil
}

// readLine reads one header line without its CRLF, bounded by maxHeader.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxHeader {
			return "", fmt.Errorf("a header line over %d bytes (maxHeader)", maxHeader)
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

// writeMessage frames body for the wire.
func writeMessage(w io.Writer, body []byte) error {
	_, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

// conn is one JSON-RPC connection to a server: requests by id, the
// server's notifications to onNotify, its requests answered by onRequest.
type conn struct {
	w         io.WriteCloser
	onNotify  func(method string, params json.RawMessage)
	onRequest func(method string, params json.RawMessage) (any, *rpcError)
	// onBroken is told when the server broke the protocol (not when its
	// output simply ended).
	onBroken func(err error)

	wmu     sync.Mutex // one message on the wire at a time
	mu      sync.Mutex
	nextID  int
	pending map[int]chan wireMsg
	done    chan struct{}
	err     error // why the connection ended, once done
}

func newConn(r io.Reader, w io.WriteCloser, onNotify func(string, json.RawMessage), onRequest func(string, json.RawMessage) (any, *rpcError), onBroken func(error)) *conn {
	c := &conn{w: w, onNotify: onNotify, onRequest: onRequest, onBroken: onBroken, pending: map[int]chan wireMsg{}, done: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(r, 64<<10))
	return c
}

func (c *conn) readLoop(r *bufio.Reader) {
	var err error
	for {
		var body []byte
		body, err = readMessage(r)
		if err != nil {
			break
		}
		var m wireMsg
		if jerr := json.Unmarshal(body, &m); jerr != nil {
			err = fmt.Errorf("a message that is not JSON: %w", jerr)
			break
		}
		c.dispatch(m)
	}
	broken := !errors.Is(err, io.EOF)
	if broken {
		err = fmt.Errorf("%w: %w", errClosed, err)
	} else {
		err = errClosed
	}
	c.mu.Lock()
	c.err = err
	c.pending = nil
	c.mu.Unlock()
	close(c.done)
	if broken && c.onBroken != nil {
		c.onBroken(err)
	}
}

func (c *conn) dispatch(m wireMsg) {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		// The server's request: answered off the read loop, so a slow
		// answer never holds up the server's other messages.
		go func() {
			res, rerr := c.onRequest(m.Method, m.Params)
			c.reply(m.ID, res, rerr)
		}()
	case m.Method != "":
		c.onNotify(m.Method, m.Params)
	case len(m.ID) > 0:
		id, err := strconv.Atoi(string(m.ID))
		if err != nil {
			return // no request of ours has that id
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (c *conn) send(m wireMsg) error {
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return writeMessage(c.w, body)
}

func (c *conn) reply(id json.RawMessage, res any, rerr *rpcError) {
	m := wireMsg{ID: id, Error: rerr}
	if rerr == nil {
		raw, err := json.Marshal(res)
		if err != nil {
			raw = []byte("null")
		}
		m.Result = raw
	}
	_ = c.send(m) // a broken pipe shows as the read loop's end
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	return c.send(wireMsg{Method: method, Params: raw})
}

// marshalParams leaves nil params out of the message (shutdown, exit).
func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	return json.Marshal(params)
}

// call sends a request and waits for its answer, the connection's end or
// ctx, whichever comes first.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	ch := make(chan wireMsg, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return c.closedErr()
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(wireMsg{ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: raw}); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: the answer does not decode: %w", method, err)
			}
		}
		return nil
	case <-c.done:
		return c.closedErr()
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *conn) closedErr() error {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *conn) close() error { return c.w.Close() }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
