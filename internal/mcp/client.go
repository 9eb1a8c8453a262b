package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/shellquote"
)

// Options are what a Manager needs from the session.
type Options struct {
	// Sandbox runs every stdio server, behind the walls its commands have.
	Sandbox sandbox.Sandbox
	// Getenv expands ${VAR} in definitions (the user's environment, as
	// the caller read it); nil expands nothing.
	Getenv func(string) string
	// CheckNet decides a connection of an HTTP server's client to a host
	// other than the one its URL names (a redirect, an auth server); nil
	// refuses them.
	CheckNet func(ctx context.Context, host string, port int) error
	// StartTimeout bounds connecting to one server (MCP_TIMEOUT); 0 is 30s.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call (MCP_TOOL_TIMEOUT); 0 is 10 minutes.
	CallTimeout time.Duration
	// Notify tells the user what happened to a server after it started (it
	// exited, its tool list changed); nil drops it.
	Notify func(string)
	// AuthFile keeps the remote servers' OAuth tokens (AuthFile(home));
	// "" stores none.
	AuthFile string
	// Login shows the user the URL to log in to a remote server that asked
	// for OAuth (and may open a browser); the flow waits for the redirect
	// to harness's loopback listener. nil: such a server is not started
	// and says how to log in (harness mcp login).
	Login func(server, url string)
}

// Manager holds the session's connections to MCP servers.
type Manager struct {
	o       Options
	servers []*conn // sorted by name

	pmu      sync.Mutex
	progress map[string]func(string) // a call's progress token: where its progress is shown

	rs restarts // servers restarted under new walls (mode.go)
}

// conn is one server's connection and what it offers.
type conn struct {
	def     Server
	m       *Manager
	renewMu sync.Mutex // one renewal of an ended session at a time
	mu      sync.Mutex
	session *rpcSession
	tools   []*Tool
	prompts []promptInfo
	// resources are the listed ones; templates are not offered as
	// mentions (their URIs are not known until filled).
	resources []resourceInfo
	changes   map[string]int // list_changed notifications seen, by list
	auth      *oauthState    // a remote server's OAuth, when it asked for it
	err       error          // why it is not connected (start failure, exit)
	stdio     *stdioTransport
	// end cancels the connection's context: an HTTP transport's streams
	// live as long as it, so it is the session's, not the start's.
	end context.CancelFunc
	// pause stops the start's clock while the user logs in (nil when not
	// starting); it returns the function that restarts it.
	pause func() func()
	login func(server, url string) // for this start, over Options.Login
	// followed: a mode switch restarted it (mode.go); the next switch
	// restarts it again even if that start failed.
	followed bool
}

// Login connects to a remote server again, running the OAuth flow when it
// asks for it: show gets the URL the user opens. It returns when the
// server is connected (or the login failed or timed out).
func (m *Manager) Login(ctx context.Context, name string, show func(server, url string)) error {
	c := m.conn(name)
	if c == nil {
		return fmt.Errorf("no MCP server is named %q (the servers: %s)", name, strings.Join(m.Names(), ", "))
	}
	if c.def.Transport() != "http" {
		return fmt.Errorf("MCP server %s is not a streamable HTTP server: only those log in with OAuth", name)
	}
	c.close()
	c.mu.Lock()
	c.err, c.login, c.tools, c.prompts, c.resources = nil, show, nil, nil, nil
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.login = nil
		c.mu.Unlock()
	}()
	return c.start(ctx)
}

// pauseStart stops the start timeout's clock; the result restarts it.
func (c *conn) pauseStart() func() {
	c.mu.Lock()
	p := c.pause
	c.mu.Unlock()
	if p == nil {
		return func() {}
	}
	return p()
}

var errStartTimeout = errors.New("start timeout")

// Start connects to every server at once and waits for them (each within
// StartTimeout). A server that fails to start is reported in the returned
// errors and left out; the others work.
func Start(ctx context.Context, defs []Server, o Options) (*Manager, []error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Minute
	}
	m := &Manager{o: o}
	for _, d := range defs {
		m.servers = append(m.servers, &conn{def: d, m: m, changes: map[string]int{}})
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].def.Name < m.servers[j].def.Name })
	errs := make([]error, len(m.servers))
	var wg sync.WaitGroup
	for i, c := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.start(ctx)
		}()
	}
	wg.Wait()
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return m, out
}

// Names are the configured servers' names, sorted.
func (m *Manager) Names() []string {
	var out []string
	for _, c := range m.servers {
		out = append(out, c.def.Name)
	}
	return out
}

// Status is one server's state, for /mcp and harness mcp list.
type Status struct {
	Name, Scope, Summary      string
	Transport                 string // stdio, http or sse
	Tools, Prompts, Resources int
	Auth                      string // a remote server's OAuth state, "" when it asked for none
	Err                       string // "" when connected
}

// Statuses lists every server.
func (m *Manager) Statuses() []Status {
	var out []Status
	for _, c := range m.servers {
		c.mu.Lock()
		st := Status{Name: c.def.Name, Scope: string(c.def.Scope), Summary: c.def.Summary(), Transport: c.def.Transport(),
			Tools: len(c.tools), Prompts: len(c.prompts), Resources: len(c.resources)}
		if c.err != nil {
			st.Err = c.err.Error()
		}
		a := c.auth
		c.mu.Unlock()
		if a != nil {
			st.Auth = a.status()
		}
		out = append(out, st)
	}
	return out
}

// Close ends every connection and kills every stdio server with all it
// started; it returns when they are gone (or after a few seconds).
func (m *Manager) Close() {
	m.stopRestarts()
	var wg sync.WaitGroup
	for _, c := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.close()
		}()
	}
	wg.Wait()
}

func (c *conn) start(ctx context.Context) error {
	def, err := c.def.Expand(c.m.getenv)
	if err != nil {
		return c.fail(err)
	}
	// The connection lives in a context of its own; the start's timeout
	// and the caller's cancellation end it only while it starts.
	cctx, end := context.WithCancel(context.Background())
	c.end = end
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clock := time.AfterFunc(c.m.o.StartTimeout, func() { cancel(errStartTimeout) })
	defer clock.Stop()
	c.mu.Lock()
	c.pause = func() func() {
		clock.Stop()
		return func() { clock.Reset(c.m.o.StartTimeout) }
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.pause = nil
		c.mu.Unlock()
	}()
	var s *rpcSession
	mc, err := c.connect(sctx, cctx, def)
	if err == nil {
		s = newSession(mc, c.onNotify)
		err = s.initialize(sctx)
	}
	if err != nil {
		if s != nil {
			s.close()
		}
		end()
		if t := c.transport(); t != nil {
			t.stop()
			if why := t.why(); why != "" {
				err = fmt.Errorf("%w; %s", err, why)
			}
		}
		if context.Cause(sctx) == errStartTimeout {
			err = fmt.Errorf("did not answer within %s (MCP_TIMEOUT raises it): %w", c.m.o.StartTimeout, err)
		}
		return c.fail(err)
	}
	c.mu.Lock()
	c.session = s
	c.mu.Unlock()
	if err := c.listTools(sctx); err != nil {
		s.close()
		end()
		if t := c.transport(); t != nil {
			t.stop()
		}
		return c.fail(fmt.Errorf("listing its tools: %w", err))
	}
	// Prompts and resources are extras: a server that fails to list them
	// still gives its tools.
	if err := c.listPrompts(sctx); err != nil && c.m.o.Notify != nil {
		c.m.o.Notify(fmt.Sprintf("MCP server %s: listing its prompts failed: %v", c.def.Name, err))
	}
	if err := c.listResources(sctx); err != nil && c.m.o.Notify != nil {
		c.m.o.Notify(fmt.Sprintf("MCP server %s: listing its resources failed: %v", c.def.Name, err))
	}
	return nil
}

// connect opens the transport def names: ctx bounds the start, life is
// the connection's.
func (c *conn) connect(ctx, life context.Context, def Server) (msgConn, error) {
	switch def.Transport() {
	case "http":
		var a *oauthState
		if def.Headers["Authorization"] == "" {
			// A server that answers 401 gets the MCP authorization flow;
			// one given its own Authorization header does not.
			a = newOAuth(c, def, c.m.authClient(def))
			c.mu.Lock()
			c.auth = a
			c.mu.Unlock()
		}
		return newStreamable(life, def.URL, c.m.httpClient(def), a), nil
	case "sse":
		return dialSSE(ctx, life, def.URL, c.m.httpClient(def))
	default:
		t := newStdio(c.m.o.Sandbox, def, c.exited)
		c.mu.Lock()
		c.stdio = t // read by calls while a restart replaces it (mode.go)
		c.mu.Unlock()
		return t.connect()
	}
}

// onNotify handles a server's notification.
func (c *conn) onNotify(method string, params json.RawMessage) {
	switch method {
	case "notifications/tools/list_changed":
		c.m.changed(c, "tools")
	case "notifications/prompts/list_changed":
		c.m.changed(c, "prompts")
	case "notifications/resources/list_changed":
		c.m.changed(c, "resources")
	case "notifications/progress":
		c.m.onProgress(params)
	}
}

// connected is the server's session, nil when there is none.
func (c *conn) connected() *rpcSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// call is one request on the server's session. A streamable HTTP
// session the server ended (HTTP 404 for its id) is started anew, once,
// as the spec asks, and the request sent again: the server did not see it.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	s := c.connected()
	if s == nil {
		return c.unavailable()
	}
	err := s.call(ctx, method, params, result)
	if !errors.Is(err, errSessionExpired) {
		return err
	}
	if rerr := c.renew(ctx, s); rerr != nil {
		return fmt.Errorf("%w; starting a new session failed: %v", err, rerr)
	}
	if s = c.connected(); s == nil {
		return c.unavailable()
	}
	return s.call(ctx, method, params, result)
}

// renew starts a new session in place of old (unless another call did).
func (c *conn) renew(ctx context.Context, old *rpcSession) error {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	if cur := c.connected(); cur != nil && cur != old {
		return nil
	}
	c.close()
	c.mu.Lock()
	c.err = nil
	c.mu.Unlock()
	if c.m.o.Notify != nil {
		c.m.o.Notify(fmt.Sprintf("MCP server %s ended its session; harness starts a new one", c.def.Name))
	}
	return c.start(ctx)
}

func (c *conn) fail(err error) error {
	err = fmt.Errorf("MCP server %s: %w", c.def.Name, err)
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	return err
}

func (c *conn) listTools(ctx context.Context) error {
	c.mu.Lock()
	s := c.session
	c.mu.Unlock()
	if s == nil {
		return c.unavailable()
	}
	if s.init.Capabilities.Tools == nil {
		return nil // a server without tools (resources or prompts only)
	}
	var tools []*Tool
	err := paginate(ctx, s, "tools/list", func(raw json.RawMessage) (string, error) {
		var r listToolsResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return "", &malformedError{line: raw, err: err}
		}
		for i := range r.Tools {
			tools = append(tools, &r.Tools[i])
		}
		return r.NextCursor, nil
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	return nil
}

// paginate asks for a list page by page (nextCursor) until its end;
// page decodes one and returns the next cursor. A server that repeats a
// cursor is stopped after 1000 pages.
func paginate(ctx context.Context, s *rpcSession, method string, page func(json.RawMessage) (string, error)) error {
	cursor := ""
	for range 1000 {
		var raw json.RawMessage
		if err := s.call(ctx, method, listParams{Cursor: cursor}, &raw); err != nil {
			return err
		}
		next, err := page(raw)
		if err != nil || next == "" {
			return err
		}
		cursor = next
	}
	return fmt.Errorf("%s: over 1000 pages", method)
}

// exited is called when a stdio server's process ended on its own.
func (c *conn) exited(why string) {
	c.mu.Lock()
	closing := c.session == nil
	c.err = fmt.Errorf("MCP server %s stopped: %s", c.def.Name, why)
	c.mu.Unlock()
	if !closing && c.m.o.Notify != nil {
		c.m.o.Notify(c.err.Error() + "; its tools fail until harness restarts")
	}
}

// unavailable is the error of a call to a server that is not connected.
func (c *conn) unavailable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return fmt.Errorf("MCP server %s is not connected", c.def.Name)
}

func (c *conn) close() {
	c.mu.Lock()
	s := c.session
	c.session = nil
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
	if c.end != nil {
		c.end()
	}
	if t := c.transport(); t != nil {
		t.stop()
	}
}

// transport is the stdio server's transport, nil for other servers; a
// restart under new walls replaces it while calls read it.
func (c *conn) transport() *stdioTransport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stdio
}

func (m *Manager) getenv(k string) string {
	if m.o.Getenv == nil {
		return ""
	}
	return m.o.Getenv(k)
}

func (c *conn) toolList() []*Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// httpClient is the client of one remote server: its headers on every
// request, and connections only to its own host unless CheckNet allows.
func (m *Manager) httpClient(def Server) *http.Client {
	u, _ := url.Parse(def.URL)
	own := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			own += ":443"
		} else {
			own += ":80"
		}
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil, // harness connects itself; the net rules below decide
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != own {
				host, port, _ := net.SplitHostPort(addr)
				p, _ := strconv.Atoi(port)
				if m.o.CheckNet == nil {
					return nil, fmt.Errorf("MCP server %s: connecting to %s refused: only %s, its URL's host, is allowed", def.Name, addr, own)
				}
				if err := m.o.CheckNet(ctx, host, p); err != nil {
					return nil, err
				}
			}
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: headerTransport{tr, def.Headers}}
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// stdioTransport starts a server inside the sandbox with pipes for stdin
// and stdout; stderr is kept (its tail) to explain a failure.
type stdioTransport struct {
	sb     sandbox.Sandbox
	def    Server
	onExit func(why string)

	stderr tail
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	exit   string // how it ended, once done
	// killedFor, when set, says why harness killed it (mode.go).
	killedFor string
}

func newStdio(sb sandbox.Sandbox, def Server, onExit func(string)) *stdioTransport {
	return &stdioTransport{sb: sb, def: def, onExit: onExit, done: make(chan struct{})}
}

// sessionLong is a stdio server's timeout: it runs until the session ends.
const sessionLong = 30 * 24 * time.Hour

// connect starts the server and gives its pipes as a connection.
func (t *stdioTransport) connect() (msgConn, error) {
	if t.sb == nil {
		return nil, errors.New("no sandbox to run it in")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background()) // the session's, not the connect call's
	t.cancel = cancel
	go func() {
		defer close(t.done)
		res, err := t.sb.Run(runCtx, sandbox.Cmd{Script: script(t.def), Dir: t.def.Cwd, Stdin: inR, Stdout: outW, Stderr: &t.stderr, Timeout: sessionLong})
		inR.Close()
		outW.Close() // the client reads EOF: the connection ends
		why := ""
		switch {
		case err != nil:
			why = "could not start: " + err.Error()
		case runCtx.Err() != nil:
			why = "stopped by harness"
			t.mu.Lock()
			if t.killedFor != "" {
				why += ": " + t.killedFor
			}
			t.mu.Unlock()
		default:
			why = fmt.Sprintf("exited with code %d", res.ExitCode)
		}
		if s := t.stderr.String(); s != "" && runCtx.Err() == nil {
			why += "; its last output on stderr: " + s
		}
		t.mu.Lock()
		t.exit = why
		t.mu.Unlock()
		if runCtx.Err() == nil && t.onExit != nil {
			t.onExit(why)
		}
	}()
	// The server's environment goes over its stdin before the protocol
	// starts, so values (tokens) are in no argv, script or prompt.
	if _, err := inW.WriteString(envPreamble(t.def.Env)); err != nil {
		t.stop()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("passing its environment: %w", err)
	}
	return newLineConn(outR, inW), nil
}

// why says how the process ended ("" while it runs).
func (t *stdioTransport) why() string {
	select {
	case <-t.done:
	case <-time.After(2 * time.Second):
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exit
}

// stop kills the server and everything it started, and waits for that.
func (t *stdioTransport) stop() {
	if t.cancel == nil {
		return
	}
	// Closing stdin first lets a well-behaved server exit on its own.
	select {
	case <-t.done:
	case <-time.After(500 * time.Millisecond):
	}
	t.cancel()
	select {
	case <-t.done:
	case <-time.After(10 * time.Second):
	}
}

// script is the shell line that runs the server: it reads its environment
// from stdin (KEY=VALUE lines up to a blank one), then execs the command.
func script(def Server) string {
	var b strings.Builder
	b.WriteString("# MCP server " + def.Name + "\n")
	b.WriteString("while IFS= read -r harness_kv && [ -n \"$harness_kv\" ]; do export \"$harness_kv\"; done; unset harness_kv\n")
	b.WriteString("exec " + shellquote.Quote(def.Command))
	for _, a := range def.Args {
		b.WriteString(" " + shellquote.Quote(a))
	}
	b.WriteString("\n")
	return b.String()
}

func envPreamble(env map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(env) {
		b.WriteString(k + "=" + env[k] + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// tail keeps the last 2 KB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// ended reports whether the process is gone.
func (t *stdioTransport) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}
