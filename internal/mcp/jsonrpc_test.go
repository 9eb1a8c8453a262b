package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeConn is a msgConn whose other end is the test: what the session
// writes arrives on sent, what the test puts on recv the session reads.
type pipeConn struct {
	sent chan []byte
	recv chan []byte
	once sync.Once
	done chan struct{}
}

func newPipeConn() *pipeConn {
	return &pipeConn{sent: make(chan []byte, 16), recv: make(chan []byte, 16), done: make(chan struct{})}
}

func (p *pipeConn) write(ctx context.Context, msg []byte) error {
	select {
	case p.sent <- append([]byte(nil), msg...):
		return nil
	case <-p.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeConn) read() ([]byte, error) {
	select {
	case m, ok := <-p.recv:
		if !ok {
			return nil, errors.New("EOF")
		}
		return m, nil
	case <-p.done:
		return nil, errClosed
	}
}

func (p *pipeConn) close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// next is the next message the session sent, decoded.
func (p *pipeConn) next(t *testing.T) wireMsg {
	t.Helper()
	select {
	case raw := <-p.sent:
		var m wireMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("the session sent %q: %v", raw, err)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the session sent nothing")
		return wireMsg{}
	}
}

// result is what one call returned.
type result struct {
	text string
	err  error
}

// callAsync calls method with a {"text"} result in the background.
func callAsync(s *rpcSession, ctx context.Context, method string) <-chan result {
	out := make(chan result, 1)
	go func() {
		var r struct{ Text string }
		err := s.call(ctx, method, map[string]string{}, &r)
		out <- result{r.Text, err}
	}()
	return out
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not return: the session hangs")
		return result{}
	}
}

// TestSession: the JSON-RPC session matches answers to calls by id in
// any order, drops answers to no call, answers the server's own requests
// while a call waits, fails the calls in flight on a line that is not
// JSON-RPC and goes on, fails them when the connection ends, and tells
// the server of a call whose context ended. No case may hang.
func TestSession(t *testing.T) {
	answer := func(id json.RawMessage, text string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"text":"` + text + `"}}`)
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *rpcSession, p *pipeConn)
	}{
		{"out of order", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			ma := p.next(t)
			b := callAsync(s, context.Background(), "b")
			mb := p.next(t)
			p.recv <- answer(mb.ID, "for b")
			p.recv <- answer(ma.ID, "for a")
			if r := wait(t, a); r.err != nil || r.text != "for a" {
				t.Errorf("a: %+v", r)
			}
			if r := wait(t, b); r.err != nil || r.text != "for b" {
				t.Errorf("b: %+v", r)
			}
		}},
		{"an answer to no call", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- answer(json.RawMessage(`9999`), "stray")
			p.recv <- answer(json.RawMessage(`"nosuch"`), "stray")
			p.recv <- answer(m.ID, "mine")
			if r := wait(t, a); r.err != nil || r.text != "mine" {
				t.Errorf("a: %+v", r)
			}
		}},
		{"an id as a string", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- answer(json.RawMessage(`"`+string(m.ID)+`"`), "quoted")
			if r := wait(t, a); r.err != nil || r.text != "quoted" {
				t.Errorf("a: %+v", r)
			}
		}},
		{"server requests while a call waits", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- []byte(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
			if got := p.next(t); idKey(got.ID) != "s1" || got.Error != nil || string(got.Result) != "{}" {
				t.Errorf("the answer to ping: %+v", got)
			}
			for _, method := range []string{"sampling/createMessage", "roots/list", "elicitation/create"} {
				p.recv <- []byte(`{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{}}`)
				if got := p.next(t); idKey(got.ID) != "7" || got.Error == nil || got.Error.Code != codeMethodNotFound {
					t.Errorf("the answer to %s: %+v", method, got)
				}
			}
			p.recv <- answer(m.ID, "after")
			if r := wait(t, a); r.err != nil || r.text != "after" {
				t.Errorf("a: %+v", r)
			}
		}},
		{"a malformed line", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- []byte("{this is not json\n")
			r := wait(t, a)
			if !isMalformed(r.err) || !strings.Contains(r.err.Error(), "this is not json") {
				t.Errorf("a: %+v", r)
			}
			p.recv <- answer(m.ID, "late") // the real answer, no longer waited for
			b := callAsync(s, context.Background(), "b")
			mb := p.next(t)
			p.recv <- answer(mb.ID, "goes on")
			if r := wait(t, b); r.err != nil || r.text != "goes on" {
				t.Errorf("b after the malformed line: %+v", r)
			}
		}},
		{"neither request nor response", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			p.next(t)
			p.recv <- []byte(`{"jsonrpc":"2.0","id":1}`)
			if r := wait(t, a); !isMalformed(r.err) {
				t.Errorf("a: %+v", r)
			}
		}},
		{"a result that is not the expected shape", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"text":42}}`)
			if r := wait(t, a); !isMalformed(r.err) {
				t.Errorf("a: %+v", r)
			}
		}},
		{"an error answer", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			m := p.next(t)
			p.recv <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"unknown tool"}}`)
			var re *rpcError
			if r := wait(t, a); !errors.As(r.err, &re) || re.Code != -32602 || !strings.Contains(r.err.Error(), "unknown tool") {
				t.Errorf("a: %+v", r)
			}
		}},
		{"a batch", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			ma := p.next(t)
			b := callAsync(s, context.Background(), "b")
			mb := p.next(t)
			p.recv <- []byte("[" + string(answer(ma.ID, "1")) + "," + string(answer(mb.ID, "2")) + "]")
			if r := wait(t, a); r.text != "1" {
				t.Errorf("a: %+v", r)
			}
			if r := wait(t, b); r.text != "2" {
				t.Errorf("b: %+v", r)
			}
		}},
		{"the connection ends", func(t *testing.T, s *rpcSession, p *pipeConn) {
			a := callAsync(s, context.Background(), "a")
			p.next(t)
			close(p.recv)
			if r := wait(t, a); !errors.Is(r.err, errClosed) {
				t.Errorf("a: %+v", r)
			}
			if r := wait(t, callAsync(s, context.Background(), "b")); !errors.Is(r.err, errClosed) {
				t.Errorf("a call after the end: %+v", r)
			}
		}},
		{"a cancelled call", func(t *testing.T, s *rpcSession, p *pipeConn) {
			ctx, cancel := context.WithCancel(context.Background())
			a := callAsync(s, ctx, "a")
			m := p.next(t)
			cancel()
			if r := wait(t, a); !errors.Is(r.err, context.Canceled) {
				t.Errorf("a: %+v", r)
			}
			n := p.next(t)
			var params cancelledParams
			json.Unmarshal(n.Params, &params)
			if n.Method != "notifications/cancelled" || idKey(params.RequestID) != idKey(m.ID) || len(n.ID) != 0 {
				t.Errorf("the server was told %+v (params %s)", n, n.Params)
			}
			p.recv <- answer(m.ID, "too late") // dropped
			b := callAsync(s, context.Background(), "b")
			mb := p.next(t)
			p.recv <- answer(mb.ID, "next")
			if r := wait(t, b); r.text != "next" {
				t.Errorf("b: %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPipeConn()
			s := newSession(p, nil)
			defer s.close()
			tc.run(t, s, p)
		})
	}
}

// TestSessionNotifications: notifications reach the handler in order,
// and a list_changed or progress between a call and its answer does not
// disturb the call.
func TestSessionNotifications(t *testing.T) {
	p := newPipeConn()
	var mu sync.Mutex
	var got []string
	s := newSession(p, func(method string, params json.RawMessage) {
		mu.Lock()
		got = append(got, method+" "+string(params))
		mu.Unlock()
	})
	defer s.close()
	a := callAsync(s, context.Background(), "a")
	m := p.next(t)
	p.recv <- []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1,"total":2}}`)
	p.recv <- []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	p.recv <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"text":"done"}}`)
	if r := wait(t, a); r.text != "done" {
		t.Errorf("a: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !strings.HasPrefix(got[0], "notifications/progress {") || got[1] != "notifications/tools/list_changed " {
		t.Errorf("notifications: %q", got)
	}
}

// TestInitialize: the handshake asks for the newest version, accepts an
// older one it speaks, and refuses one it does not, saying which.
func TestInitialize(t *testing.T) {
	for _, tc := range []struct{ version, err string }{
		{"2025-11-25", ""},
		{"2024-11-05", ""},
		{"2099-01-01", `the server speaks MCP version "2099-01-01", which harness does not`},
	} {
		t.Run(tc.version, func(t *testing.T) {
			p := newPipeConn()
			s := newSession(p, nil)
			defer s.close()
			done := make(chan error, 1)
			go func() { done <- s.initialize(context.Background()) }()
			m := p.next(t)
			var params initializeParams
			json.Unmarshal(m.Params, &params)
			if m.Method != "initialize" || params.ProtocolVersion != protocolVersion || params.ClientInfo.Name != "harness" || string(params.Capabilities) != "{}" {
				t.Errorf("initialize: %+v %s", m, m.Params)
			}
			p.recv <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"` + tc.version + `","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"x","version":"1"}}}`)
			if tc.err == "" {
				if n := p.next(t); n.Method != "notifications/initialized" {
					t.Errorf("after initialize: %+v", n)
				}
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("initialize hangs")
			}
			if tc.err == "" && (err != nil || s.init.Capabilities.Tools == nil || s.init.Capabilities.Prompts != nil) {
				t.Errorf("err %v, init %+v", err, s.init)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// TestLineConn: the stdio framing reads one message a line (blank lines
// skipped, a last line without its newline still read), writes one a
// line, and a write to a server that is gone says the connection closed.
func TestLineConn(t *testing.T) {
	outR, outW, _ := os.Pipe()
	inR, inW, _ := os.Pipe()
	c := newLineConn(outR, inW)
	go func() {
		outW.WriteString("{\"a\":1}\n\n  \n{\"b\":2}\n{\"c\":3}")
		outW.Close()
	}()
	for _, want := range []string{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}"} {
		if got, err := c.read(); err != nil || string(got) != want {
			t.Errorf("read %q %v, want %q", got, err, want)
		}
	}
	if _, err := c.read(); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}
	if err := c.write(context.Background(), []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if n, _ := inR.Read(buf); string(buf[:n]) != "{\"x\":1}\n" {
		t.Errorf("written %q", buf[:n])
	}
	inR.Close()
	if err := c.write(context.Background(), []byte(`{"x":2}`)); !errors.Is(err, errClosed) {
		t.Errorf("a write to a closed pipe: %v", err)
	}
	c.close()
}

// TestLineConnFull: a server that stops reading its stdin fills the pipe;
// the write gives up when its context ends instead of blocking for ever.
func TestLineConnFull(t *testing.T) {
	outR, outW, _ := os.Pipe()
	inR, inW, _ := os.Pipe()
	defer outW.Close()
	defer inR.Close()
	c := newLineConn(outR, inW)
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.write(ctx, []byte(`"`+strings.Repeat("x", 4<<20)+`"`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > 3*time.Second {
		t.Errorf("after %s: %v", time.Since(began), err)
	}
	// Half the message is on the pipe: the connection is over, and the
	// server sees the end of its stdin.
	go io.Copy(io.Discard, inR)
	if err := c.write(context.Background(), []byte(`{}`)); !errors.Is(err, errClosed) || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("the next write: %v", err)
	}

	// A write that times out before any byte went leaves the connection
	// usable, with no stale deadline.
	outR2, outW2, _ := os.Pipe()
	inR2, inW2, _ := os.Pipe()
	defer outW2.Close()
	c2 := newLineConn(outR2, inW2)
	defer c2.close()
	full := make([]byte, 1<<20)
	inW2.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	inW2.Write(full) // fill the pipe
	inW2.SetWriteDeadline(time.Time{})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if err := c2.write(ctx2, []byte(`{}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write to a full pipe: %v", err)
	}
	go io.Copy(io.Discard, inR2)
	if err := c2.write(context.Background(), []byte(`{}`)); err != nil {
		t.Errorf("the next write: %v", err)
	}
	inR2.Close()
}
