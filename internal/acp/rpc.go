package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID, Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// handler answers one request or notification; a notification's result is
// dropped.
type handler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// conn is one side of a newline-delimited JSON-RPC 2.0 stream. Every
// message is handled in order on the reading goroutine and must not block
// there: a request's slow work returns as async and runs on its own
// goroutine, so a long session/prompt does not stop its session/cancel
// from being read.
type conn struct {
	out io.Writer
	wmu sync.Mutex

	mu      sync.Mutex
	next    int
	pending map[string]chan *message
	closed  bool
}

func newConn(out io.Writer) *conn {
	return &conn{out: out, pending: map[string]chan *message{}}
}

// write sends one message as one line.
func (c *conn) write(m *message) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.out.Write(append(b, '\n'))
	return err
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(&message{Method: method, Params: p})
}

// call sends a request and waits for its answer or ctx.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("the client has closed the connection")
	}
	c.next++
	id := strconv.Itoa(c.next)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() { c.mu.Lock(); delete(c.pending, id); c.mu.Unlock() }()
	if err := c.write(&message{ID: json.RawMessage(id), Method: method, Params: p}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case m, ok := <-ch:
		if !ok || m == nil {
			return errors.New("the client has closed the connection")
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	}
}

// serve reads in until EOF or ctx, dispatching to h. It returns once the
// input ends and every request handler has returned.
func (c *conn) serve(ctx context.Context, in io.Reader, h handler) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		c.mu.Lock()
		c.closed = true
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			c.dispatch(ctx, line, h, &wg)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading the client's messages: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (c *conn) dispatch(ctx context.Context, line []byte, h handler, wg *sync.WaitGroup) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		_ = c.write(&message{ID: json.RawMessage("null"), Error: &RPCError{Code: codeParse, Message: "parse error: " + err.Error()}})
		return
	}
	switch {
	case m.Method == "" && m.ID != nil: // a response to one of ours
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	case m.Method == "":
		_ = c.write(&message{ID: json.RawMessage("null"), Error: &RPCError{Code: codeInvalidRequest, Message: "a message with neither method nor id"}})
	case m.ID == nil || string(m.ID) == "null": // a notification
		_, _ = h(ctx, m.Method, m.Params)
	default:
		// The handler runs here, in the order of the input, so what it
		// sets up (a prompt's turn) is in place before the next message
		// (its cancel) is read; the slow part, returned as async, runs
		// on its own goroutine.
		res, err := h(ctx, m.Method, m.Params)
		if a, ok := res.(async); ok && err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := a()
				c.reply(m.ID, res, err)
			}()
			return
		}
		c.reply(m.ID, res, err)
	}
}

// async is a request's work that runs on its own goroutine, its answer
// written when it returns.
type async func() (any, error)

// reply answers request id.
func (c *conn) reply(id json.RawMessage, res any, err error) {
	var after func()
	if a, ok := res.(afterReply); ok {
		res, after = a.result, a.after
	}
	reply := &message{ID: id}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: codeInternal, Message: err.Error()}
		}
		reply.Error = re
	} else {
		if res == nil {
			res = struct{}{}
		}
		b, merr := json.Marshal(res)
		if merr != nil {
			reply.Error = &RPCError{Code: codeInternal, Message: merr.Error()}
		} else {
			reply.Result = b
		}
	}
	_ = c.write(reply)
	if after != nil && reply.Error == nil {
		after()
	}
}

// invalidParams is the error for params that do not decode.
func invalidParams(err error) error {
	return &RPCError{Code: codeInvalidParams, Message: "invalid params: " + err.Error()}
}
