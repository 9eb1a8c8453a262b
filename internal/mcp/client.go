package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/sandbox"
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
	// Images says the model takes images: an image in a tool result
	// reaches it as an image; otherwise it is described in words.
	Images bool
	// Log keeps what a server logs (notifications/message) in the
	// session's log, without telling the user; nil drops it.
	Log func(server, level, text string)
	// Elicit answers a server's question to the user (elicitation/create,
	// form mode): the session shows a form, or declines at once when no
	// one can answer. nil: harness does not declare elicitation.
	Elicit func(ctx context.Context, q *Elicitation) (ElicitAnswer, error)
	// Sample runs a server's sampling/createMessage through the session's
	// model once it is allowed, or returns an error wrapping
	// ErrSampleRejected. nil: harness does not declare sampling.
	Sample func(ctx context.Context, r *Sampling) (*Sampled, error)
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
	session *sdk.ClientSession
	init    *sdk.InitializeResult // the session's, kept for its capabilities and instructions
	told    bool                  // its instructions reached the model (capabilities.go)
	tools   []*Tool
	prompts []*sdk.Prompt
	// resources are the listed ones; templates are not offered as
	// mentions (their URIs are not known until filled).
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate // read by filling in their URIs
	badAnswer string                  // a streamable answer the SDK refuses (answerCheck)
	// subscribed are the resources read and subscribed to (true once the
	// server said yes); stale, those it said changed since (subscribe.go).
	subscribed, stale map[string]bool
	changes           map[string]int // list_changed notifications seen, by list
	auth              *oauthState    // a remote server's OAuth, when it asked for it
	err               error          // why it is not connected (start failure, exit)
	stdio             *stdioTransport
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
	var cs *sdk.ClientSession
	t, err := c.connect(cctx, def)
	if err == nil {
		cs, err = c.m.newClient(c).Connect(sctx, t, nil)
	}
	if err != nil {
		end()
		if t := c.transport(); t != nil {
			t.stop()
			if why := t.why(); why != "" {
				err = fmt.Errorf("%w; %s", err, why)
			}
		}
		if why := c.answerWhy(); why != "" && !strings.Contains(err.Error(), why) {
			// The SDK may report only the connection it closed over it.
			err = fmt.Errorf("%w; the server answered with %s", err, why)
		}
		if context.Cause(sctx) == errStartTimeout {
			err = fmt.Errorf("did not answer within %s (MCP_TIMEOUT raises it): %w", c.m.o.StartTimeout, err)
		}
		return c.fail(overLimit(err))
	}
	c.mu.Lock()
	c.session, c.init = cs, cs.InitializeResult()
	c.mu.Unlock()
	go c.watch(cs)
	if err := c.listTools(sctx); err != nil {
		cs.Close()
		end()
		if t := c.transport(); t != nil {
			t.stop()
		}
		return c.fail(fmt.Errorf("listing its tools: %w", err))
	}
	//lint:ignore SA1019 logging/setLevel is how servers of 2025-11-25 are asked to log
	if caps := c.caps(); caps.Logging != nil && c.m.o.Log != nil {
		// Servers log nothing until asked; what they log goes to the
		// session's log. A server that refuses loses only its log.
		//lint:ignore SA1019 as above
		cs.SetLoggingLevel(sctx, &sdk.SetLoggingLevelParams{Level: "info"})
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

// connect makes the transport def names; life is the connection's
// context (the start's ends when it is connected).
func (c *conn) connect(life context.Context, def Server) (sdk.Transport, error) {
	switch def.Transport() {
	case "http":
		client := c.m.httpClient(def)
		if def.Headers["Authorization"] == "" {
			// A server that answers 401 gets the MCP authorization flow;
			// one given its own Authorization header does not.
			a := newOAuth(c, def, c.m.authClient(def))
			c.mu.Lock()
			c.auth = a
			c.mu.Unlock()
			client.Transport = &authTransport{base: client.Transport, auth: a}
		}
		client.Transport = &answerCheck{base: client.Transport, c: c}
		return &sdk.StreamableClientTransport{Endpoint: def.URL, HTTPClient: client, MaxEventSize: maxMessage}, nil
	case "sse":
		return &lifeTransport{life: life, t: &sdk.SSEClientTransport{Endpoint: def.URL, HTTPClient: c.m.httpClient(def), MaxEventSize: maxMessage}}, nil
	default:
		t := newStdio(c.m.o.Sandbox, def, c.exited)
		c.mu.Lock()
		c.stdio = t // read by calls while a restart replaces it (mode.go)
		c.mu.Unlock()
		r, w, err := t.connect()
		if err != nil {
			return nil, err
		}
		return &sdk.IOTransport{Reader: r, Writer: w, MaxLineLength: maxMessage}, nil
	}
}

// lifeTransport connects t in the connection's context, not the
// start's: the SDK's HTTP+SSE client holds its event stream in the
// context it connects in. The start's end before it is connected still
// stops it.
type lifeTransport struct {
	life context.Context
	t    sdk.Transport
}

func (l *lifeTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	lctx, cancel := context.WithCancel(l.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := l.t.Connect(lctx)
	if !stop() {
		if err == nil {
			conn.Close()
		}
		return nil, fmt.Errorf("connecting: %w", context.Cause(ctx))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil
}

// watch notices a session that ended on its own and says why: the
// server exited (exited says it, with its code), closed its end, or sent
// what the SDK could not read (the session ends then, and the server is
// stopped).
func (c *conn) watch(cs *sdk.ClientSession) {
	err := cs.Wait()
	broken := err != nil && !errors.Is(err, sdk.ErrConnectionClosed) && !errors.Is(err, io.EOF)
	stdio := c.transport()
	if !broken && stdio != nil {
		stdio.why() // a stdio server's own exit is said by exited, with its code
	}
	c.mu.Lock()
	if c.session != cs {
		c.mu.Unlock()
		return // closed by harness
	}
	c.session = nil
	// A message over the limit is the cause even when the server's exit
	// was said first: harness stopped reading, so it died of SIGPIPE.
	told := c.err != nil && !(broken && overLimit(err) != err)
	if !told {
		why := "its connection ended"
		switch {
		case broken && overLimit(err) != err:
			why = overLimit(err).Error()
		case broken && stdio != nil:
			why = "it wrote a malformed message on its stdout (not JSON-RPC), which ends an MCP session: " + err.Error()
		case broken:
			why = "its connection failed: " + err.Error()
		}
		c.err = fmt.Errorf("MCP server %s stopped: %s", c.def.Name, why)
	}
	err = c.err
	c.mu.Unlock()
	if t := c.transport(); t != nil {
		t.stop()
	}
	if !told && c.m.o.Notify != nil {
		c.m.o.Notify(err.Error() + "; its tools fail until harness restarts")
	}
}

// stoppedWhy waits a moment for watch to see that s ended, and returns
// why (nil while it has not).
func (c *conn) stoppedWhy(s *sdk.ClientSession) error {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		gone, err := c.session != s, c.err
		c.mu.Unlock()
		if gone {
			return err
		}
	}
	return nil
}

// connected is the server's session, nil when there is none.
func (c *conn) connected() *sdk.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// do is one request on the server's session. A streamable HTTP
// session the server ended (HTTP 404 for its id) is started anew, once,
// as the spec asks, and the request sent again: the server did not see it.
func (c *conn) do(ctx context.Context, req func(*sdk.ClientSession) error) error {
	s := c.connected()
	if s == nil {
		return c.unavailable()
	}
	err := req(s)
	if !errors.Is(err, sdk.ErrSessionMissing) {
		return err
	}
	if rerr := c.renew(ctx, s); rerr != nil {
		return fmt.Errorf("%w; starting a new session failed: %v", err, rerr)
	}
	if s = c.connected(); s == nil {
		return c.unavailable()
	}
	return req(s)
}

// renew starts a new session in place of old (unless another call did).
func (c *conn) renew(ctx context.Context, old *sdk.ClientSession) error {
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
	s := c.connected()
	if s == nil {
		return c.unavailable()
	}
	if c.caps().Tools == nil {
		return nil // a server without tools (resources or prompts only)
	}
	var tools []*Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		tools = append(tools, toolOf(t))
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	return nil
}

// caps are the server's capabilities (none when not connected).
func (c *conn) caps() sdk.ServerCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.init == nil || c.init.Capabilities == nil {
		return sdk.ServerCapabilities{}
	}
	return *c.init.Capabilities
}

// exited is called when a stdio server's process ended on its own.
func (c *conn) exited(why string) {
	c.mu.Lock()
	closing := c.session == nil
	if closing && c.err != nil {
		c.mu.Unlock()
		return // watch said why it ended
	}
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
		s.Close()
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

// answerCheck notes a streamable server's answer to a POST that is
// neither JSON nor an event stream (a login page, a proxy's error
// page): the SDK refuses it, but may report only the connection it
// closed over it, and the user needs the cause.
type answerCheck struct {
	base http.RoundTripper
	c    *conn
}

func (a *answerCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || resp.StatusCode/100 != 2 {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/json" || ct == "text/event-stream" || ct == "" && !isRequest(r) {
		return resp, err // an answer, or a 202 with nothing for a notification
	}
	a.c.mu.Lock()
	if a.c.badAnswer == "" {
		a.c.badAnswer = fmt.Sprintf("unsupported content type %q (HTTP %d)", ct, resp.StatusCode)
	}
	a.c.mu.Unlock()
	return resp, err
}

// isRequest reports whether the JSON-RPC message r posts is a request
// (it has an id and a method), which needs an answer.
func isRequest(r *http.Request) bool {
	if r.GetBody == nil {
		return false
	}
	body, err := r.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&m) == nil && len(m.ID) > 0 && m.Method != ""
}

// answerWhy is what answerCheck noted, if anything.
func (c *conn) answerWhy() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.badAnswer
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
