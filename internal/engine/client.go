package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The API versions harness speaks. A client asks the engine's /_ping for
// its version and uses the lower of it and MaxAPIVersion in every path
// (/v1.NN/...), as the official client does; DOCKER_API_VERSION fixes it
// instead. The requests and the fields read here are unchanged since
// 1.40 (the official client's floor, which harness keeps); the ceiling is
// that of the official client harness used before (moby client v0.6.2),
// so an engine sees the same version as it did then. Docker 29 refuses
// versions below 1.44: a lower ceiling would lock harness out of it.
const (
	MinAPIVersion = "1.40"
	MaxAPIVersion = "1.56"
)

// Environment variables read as the official client's FromEnv reads them.
const (
	EnvHost       = "DOCKER_HOST"
	EnvAPIVersion = "DOCKER_API_VERSION"
	EnvCertPath   = "DOCKER_CERT_PATH"
	EnvTLSVerify  = "DOCKER_TLS_VERIFY"
)

// DefaultHost is where the engine listens unless DOCKER_HOST says.
func DefaultHost() string {
	if runtime.GOOS == "windows" {
		return "npipe:////./pipe/docker_engine"
	}
	return "unix:///var/run/docker.sock"
}

// fakeHost is the Host header of requests over a unix socket, where the
// URL needs one but no one reads it (a name reserved for this by RFC 6761,
// the one the official client sends).
const fakeHost = "api.moby.localhost"

// Errors a caller decides by, with errors.Is.
var (
	// ErrNotFound: the engine has no such container, exec or image (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the object's state (409),
	// e.g. a container that is not running.
	ErrConflict = errors.New("conflict")
	// ErrUnreachable: no connection to the engine (not running, no
	// socket, refused, no permission).
	ErrUnreachable = errors.New("the engine cannot be reached")
)

// Error is the engine's refusal of a request: its HTTP status and the
// message of its JSON answer ({"message": ...}).
type Error struct {
	StatusCode int
	Message    string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("the engine answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Is makes a 404 ErrNotFound and a 409 ErrConflict.
func (e *Error) Is(target error) bool {
	return target == ErrNotFound && e.StatusCode == http.StatusNotFound ||
		target == ErrConflict && e.StatusCode == http.StatusConflict
}

// ConnError is a failure to connect to the engine at Host.
type ConnError struct {
	Host string
	Err  error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("cannot connect to the engine at %s: %v", e.Host, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// Is makes every ConnError ErrUnreachable.
func (e *ConnError) Is(target error) bool { return target == ErrUnreachable }

// Client talks to one engine over its Engine API. It is safe for
// concurrent use.
type Client struct {
	host     string // as given, for messages
	network  string // "unix" or "tcp"
	addr     string // socket path or host:port
	basePath string // a tcp:// host's path, if any
	tls      *tls.Config
	http     *http.Client
	tr       *http.Transport

	mu      sync.Mutex
	version string // the API version in use; "" until negotiated
}

// New returns a client of the engine at host (unix:///path or
// tcp://host:port; "" for DOCKER_HOST, else DefaultHost). Like the
// official client's FromEnv, it takes TLS from DOCKER_CERT_PATH (ca.pem,
// cert.pem, key.pem; the server's certificate checked only when
// DOCKER_TLS_VERIFY is set) and a fixed API version from
// DOCKER_API_VERSION. Nothing is sent before the first call.
func New(host string) (*Client, error) {
	if host == "" {
		host = os.Getenv(EnvHost)
	}
	if host == "" {
		host = DefaultHost()
	}
	c := &Client{host: host}
	proto, addr, ok := strings.Cut(host, "://")
	if !ok || addr == "" {
		return nil, fmt.Errorf("engine host %q: want unix:///path or tcp://host:port", host)
	}
	switch proto {
	case "unix":
		c.network, c.addr = "unix", addr
	case "tcp":
		u, err := url.Parse("tcp://" + addr)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("engine host %q: want tcp://host:port", host)
		}
		c.network, c.addr, c.basePath = "tcp", u.Host, strings.TrimSuffix(u.Path, "/")
	case "ssh", "npipe", "fd":
		return nil, fmt.Errorf("engine host %q: %s:// is not supported; use unix:// or tcp:// (for ssh, forward the socket: ssh -L /tmp/docker.sock:/var/run/docker.sock HOST, then DOCKER_HOST=unix:///tmp/docker.sock)", host, proto)
	default:
		return nil, fmt.Errorf("engine host %q: unknown scheme %q; use unix:// or tcp://", host, proto)
	}
	var err error
	if c.tls, err = tlsFromEnv(); err != nil {
		return nil, err
	}
	if v := strings.TrimPrefix(strings.TrimSpace(os.Getenv(EnvAPIVersion)), "v"); v != "" {
		if _, _, ok := parseVersion(v); !ok {
			return nil, fmt.Errorf("%s=%q: want MAJOR.MINOR, e.g. 1.44", EnvAPIVersion, v)
		}
		c.version = v
	}
	c.tr = &http.Transport{
		DialContext:     c.dial,
		TLSClientConfig: c.tls,
		MaxIdleConns:    6,
		IdleConnTimeout: 30 * time.Second,
	}
	// No redirects: the engine sends none, and a POST must not turn into
	// a GET.
	c.http = &http.Client{Transport: c.tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// tlsFromEnv is the official client's WithTLSClientConfigFromEnv.
func tlsFromEnv() (*tls.Config, error) {
	dir := os.Getenv(EnvCertPath)
	if dir == "" {
		return nil, nil
	}
	fail := func(err error) (*tls.Config, error) {
		return nil, fmt.Errorf("TLS from %s=%s: %w", EnvCertPath, dir, err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return fail(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fail(errors.New("ca.pem holds no PEM certificate"))
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		return fail(err)
	}
	return &tls.Config{
		RootCAs:      pool,
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// As the official client: without DOCKER_TLS_VERIFY the
		// connection is encrypted but the server not checked.
		InsecureSkipVerify: os.Getenv(EnvTLSVerify) == "",
	}, nil
}

// Host is the engine's address as given (unix:///var/run/docker.sock).
func (c *Client) Host() string { return c.host }

// Close lets go of idle connections.
func (c *Client) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}

func (c *Client) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, c.network, c.addr)
}

// dialStream is a connection of its own for a hijacked stream, with TLS
// when the client has it, and the raw connection beneath.
func (c *Client) dialStream(ctx context.Context) (conn, raw net.Conn, err error) {
	raw, err = c.dial(ctx, "", "")
	if err != nil {
		return nil, nil, &ConnError{Host: c.host, Err: err}
	}
	if c.tls == nil {
		return raw, raw, nil
	}
	cfg := c.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(c.addr)
	}
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, nil, &ConnError{Host: c.host, Err: err}
	}
	return tc, raw, nil
}

// Ping asks the engine whether it answers and, unless the version is
// fixed or already agreed, agrees on the API version from its answer.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.ping(ctx)
	return err
}

// ping does GET /_ping, unversioned, and negotiates from its API-Version.
func (c *Client) ping(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, http.MethodGet, c.basePath+"/_ping", nil, nil)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" {
		return c.version, nil
	}
	v, err := negotiate(resp.Header.Get("Api-Version"))
	if err != nil {
		return "", err
	}
	c.version = v
	return v, nil
}

// negotiate is the version to use with an engine whose newest is
// engine: the lower of it and MaxAPIVersion (MaxAPIVersion if the
// engine does not say, as the official client does).
func negotiate(engine string) (string, error) {
	if engine == "" {
		return MaxAPIVersion, nil
	}
	if _, _, ok := parseVersion(engine); !ok {
		return "", fmt.Errorf("the engine names its API version %q: want MAJOR.MINOR", engine)
	}
	if versionLess(engine, MinAPIVersion) {
		return "", fmt.Errorf("the engine speaks Engine API %s; harness needs %s or newer (Docker 19.03 and later)", engine, MinAPIVersion)
	}
	if versionLess(engine, MaxAPIVersion) {
		return engine, nil
	}
	return MaxAPIVersion, nil
}

func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(v, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || x < 0 || y < 0 {
		return 0, 0, false
	}
	return x, y, true
}

// versionLess compares two well-formed MAJOR.MINOR versions.
func versionLess(a, b string) bool {
	x1, y1, _ := parseVersion(a)
	x2, y2, _ := parseVersion(b)
	return x1 < x2 || x1 == x2 && y1 < y2
}

// apiVersion is the version in use, negotiated on first need.
func (c *Client) apiVersion(ctx context.Context) (string, error) {
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v != "" {
		return v, nil
	}
	return c.ping(ctx)
}

// url is path under the agreed version, with query.
func (c *Client) url(ctx context.Context, path string, query url.Values) (string, error) {
	v, err := c.apiVersion(ctx)
	if err != nil {
		return "", err
	}
	return (&url.URL{Path: c.basePath + "/v" + v + path, RawQuery: query.Encode()}).String(), nil
}

// request builds a request for the engine at urlPath (already versioned,
// or /_ping).
func (c *Client) request(ctx context.Context, method, urlPath string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, urlPath, body)
	if err != nil {
		return nil, err
	}
	req.URL.Scheme, req.URL.Host = "http", c.addr
	if c.tls != nil {
		req.URL.Scheme = "https"
	}
	if c.network == "unix" {
		req.URL.Host = fakeHost
	}
	req.Header.Set("User-Agent", "harness")
	return req, nil
}

// send makes one request and returns the engine's answer when it is a
// success (2xx or 3xx); a refusal becomes an *Error, a failure to
// connect a *ConnError.
func (c *Client) send(ctx context.Context, method, urlPath string, body io.Reader, header http.Header) (*http.Response, error) {
	req, err := c.request(ctx, method, urlPath, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, responseError(resp)
	}
	return resp, nil
}

// transportError says what went wrong below HTTP: a failed dial is a
// ConnError; the request's own context ending stays that.
func (c *Client) transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return &ConnError{Host: c.host, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("the engine at %s: %w", c.host, err)
}

// responseError reads a refusal's message.
func responseError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{StatusCode: resp.StatusCode}
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) == nil && m.Message != "" {
		e.Message = strings.TrimSpace(m.Message)
	} else if s := strings.TrimSpace(string(body)); s != "" {
		e.Message = fmt.Sprintf("the engine answered %d: %.200s", resp.StatusCode, s)
	}
	return e
}

// do sends a versioned request with an optional JSON body in and decodes
// a JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.stream(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	defer resp.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp)
		return err
	}
	if err := json.NewDecoder(resp).Decode(out); err != nil {
		return fmt.Errorf("the engine's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// stream is do's request, its answer's body left for the caller to read.
func (c *Client) stream(ctx context.Context, method, path string, query url.Values, in any) (io.ReadCloser, error) {
	var body io.Reader
	var header http.Header
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body, header = bytes.NewReader(b), http.Header{"Content-Type": {"application/json"}}
	}
	return c.raw(ctx, method, path, query, body, header)
}

// raw sends body as is.
func (c *Client) raw(ctx context.Context, method, path string, query url.Values, body io.Reader, header http.Header) (io.ReadCloser, error) {
	u, err := c.url(ctx, path, query)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(ctx, method, u, body, header)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
