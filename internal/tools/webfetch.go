package tools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/shellquote"
)

// ConnServer serves one client connection to the session's network proxy
// (*netproxy.Proxy): web_fetch's only way out, so a fetch obeys the same
// net rules, asks the same way and is recorded like a command's connection.
type ConnServer interface {
	Serve(ctx context.Context, c net.Conn)
}

// WebFetch fetches a URL on the host through the session's proxy and
// returns it as Markdown (HTML) or text. Every connection, redirects
// included, is a new one through the proxy, so each hop is decided and its
// address checked (private, loopback, link-local and metadata addresses
// only by a rule naming host and port exactly) on the address dialled.
//
// A URL on localhost (or 127.0.0.0/8, ::1) names the sandbox's own
// loopback, where the dev servers the agent started in the background
// listen, not the host's: it is fetched inside the walls (curl, proxy
// off), as the agent's own commands would see it, so the page is the
// agent's server's and no host service is reached (beyond the host ports
// an exact rule already forwards inside). It asks nothing: that loopback
// holds only what the agent started or the user allowed. Redirects
// between such URLs stay inside; a redirect from elsewhere to loopback is
// the proxy's business, and it refuses it.
type WebFetch struct {
	Proxy ConnServer
	// Sandbox, when set, fetches loopback URLs inside the walls; only a
	// sandbox whose loopback is its own (sandbox.OwnLoopback).
	Sandbox sandbox.Sandbox
	// MaxBytes bounds the body read (default 10 MiB); the result is then
	// capped and spilled like any tool result.
	MaxBytes int64
	// TLS is the client TLS configuration; nil means the system roots
	// (tests give their own).
	TLS *tls.Config
}

const (
	defaultFetchBytes = 10 << 20
	// maxHTMLConvert bounds the HTML converted to Markdown: the
	// converter's tree of a page of small elements takes some forty times
	// its size (a 10 MiB page of small paragraphs took 460 MiB of heap and 13 s).
	maxHTMLConvert      = 2 << 20
	defaultFetchTimeout = 30 * time.Second
	maxFetchTimeout     = 120 * time.Second
	maxRedirects        = 10
	// proxyHost is where plain-HTTP requests are addressed; the dial
	// never leaves the process (a pipe to the proxy).
	proxyHost = "harness-proxy.invalid:3128"
)

type fetchArgs struct {
	URL     string `json:"url"`
	Raw     bool   `json:"raw"`
	Timeout int    `json:"timeout"`
}

// Spec implements Tool.
func (w *WebFetch) Spec() llm.Tool {
	return llm.Tool{
		Name: "web_fetch",
		Description: "Fetch an http(s) URL from the host through harness's network proxy (the same allowed hosts as bash: an unlisted host " +
			"asks the user; private, loopback and cloud-metadata addresses are refused unless a rule names that host and port exactly; " +
			"each redirect is checked again). HTML is converted to Markdown (raw: true returns the body as sent, e.g. to read a page's source); " +
			"other text is returned as is. The result starts with the final URL, the status and the content type; long pages are cut " +
			"and saved whole to a file you can page. http://localhost:PORT (or 127.0.0.1) is fetched inside the sandbox, where the dev " +
			"servers you start with bash background: true listen, without asking.",
		Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"The http:// or https:// URL to fetch."},"raw":{"type":"boolean","description":"Return the body as sent instead of converting HTML to Markdown."},"timeout":{"type":"integer","description":"Timeout in seconds (default 30, max 120)."}},"required":["url"]}`),
	}
}

func parseFetchURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("bad url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http:// and https:// URLs can be fetched", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q names no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q carries credentials; harness does not send them", s)
	}
	return u, nil
}

// Access implements Tool. The tool call itself touches no file and runs no
// command; the connection is decided by the proxy, host by host.
func (w *WebFetch) Access(input json.RawMessage) (Access, error) {
	var a fetchArgs
	if err := decode(input, &a, "url"); err != nil {
		return Access{}, err
	}
	if _, err := parseFetchURL(a.URL); err != nil {
		return Access{}, err
	}
	return Access{Tool: "web_fetch", Command: a.URL}, nil
}

// errProxyRefused is a refusal by the proxy (a rule, the user, or an
// address only an exact rule reaches), as opposed to the site's answer.
type errProxyRefused struct{ reason string }

func (e *errProxyRefused) Error() string { return e.reason }

// transport sends every request through the proxy over in-process pipes:
// plain HTTP in absolute form, HTTPS through a CONNECT tunnel opened here,
// so that the proxy's reason for a refusal reaches the model.
//
// Each hop's connection is served as asked by "web_fetch URL" (that hop's
// URL), so a question says who wants the host, not whichever commands run.
func (w *WebFetch) transport(ctx context.Context) http.RoundTripper {
	pipe := func(dialCtx context.Context) net.Conn {
		c, s := net.Pipe()
		go w.Proxy.Serve(netproxy.WithAsker(ctx, netproxy.AskedBy(dialCtx)), s)
		return c
	}
	return askerTransport{&http.Transport{
		Proxy: func(r *http.Request) (*url.URL, error) {
			if r.URL.Scheme == "http" {
				return &url.URL{Scheme: "http", Host: proxyHost}, nil
			}
			return nil, nil
		},
		DialContext: func(dctx context.Context, _, addr string) (net.Conn, error) {
			if addr == proxyHost {
				return pipe(dctx), nil
			}
			return connect(dctx, pipe(dctx), addr)
		},
		TLSClientConfig:       w.TLS,
		DisableKeepAlives:     true, // each hop a new connection, decided anew
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}}
}

// askerTransport names each request's URL as the asker of its connection.
type askerTransport struct{ next http.RoundTripper }

func (a askerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The whole URL, query included: what leaves is what the user judges.
	return a.next.RoundTrip(r.WithContext(netproxy.WithAsker(r.Context(), "web_fetch "+clip(r.URL.String(), 300))))
}

// connect opens a CONNECT tunnel to addr over c.
func connect(ctx context.Context, c net.Conn, addr string) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		c.Close()
		return nil, &errProxyRefused{reason: strings.TrimSpace(strings.TrimPrefix(string(body), "harness: "))}
	}
	c.SetDeadline(time.Time{})
	return &bufConn{Conn: c, r: br}, nil
}

// bufConn reads what the CONNECT answer's reader buffered first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// Run implements Tool.
func (w *WebFetch) Run(ctx context.Context, input json.RawMessage) Result {
	var a fetchArgs
	if err := decode(input, &a, "url"); err != nil {
		return Errorf("%v", err)
	}
	u, err := parseFetchURL(a.URL)
	if err != nil {
		return Errorf("%v", err)
	}
	limit := w.MaxBytes
	if limit <= 0 {
		limit = defaultFetchBytes
	}
	inside := loopbackHost(u.Hostname())
	switch {
	case inside && w.Sandbox == nil:
		return Errorf("web_fetch %s: this session has no sandbox whose loopback could be fetched", u)
	case !inside && w.Proxy == nil:
		return Errorf("web_fetch is not available: this session has no network proxy")
	}
	timeout := defaultFetchTimeout
	if a.Timeout > 0 {
		timeout = min(time.Duration(a.Timeout)*time.Second, maxFetchTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var hops []string
	var rt http.RoundTripper = refuseTransport{}
	if w.Proxy != nil {
		rt = w.transport(ctx)
	}
	if w.Sandbox != nil {
		rt = &insideTransport{sb: w.Sandbox, limit: limit, timeout: timeout, next: rt}
	}
	client := &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			hops = append(hops, req.URL.String())
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Errorf("bad url: %v", err)
	}
	req.Header.Set("User-Agent", "harness-web-fetch")
	req.Header.Set("Accept", "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		var ref *errProxyRefused
		if errors.As(err, &ref) {
			return Errorf("web_fetch %s: refused by harness: %s%s", u, ref.reason, via(hops))
		}
		if ctx.Err() == context.DeadlineExceeded {
			return Errorf("web_fetch %s: timed out after %s%s", u, timeout, via(hops))
		}
		return Errorf("web_fetch %s: %v%s", u, err, via(hops))
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Harness-Proxy") == "refused" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return Errorf("web_fetch %s: refused by harness: %s%s", resp.Request.URL, strings.TrimSpace(strings.TrimPrefix(string(body), "harness: ")), via(hops))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	cut := int64(len(body)) > limit
	if cut {
		body = body[:limit]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "URL: %s\nStatus: %s\n", resp.Request.URL, resp.Status)
	ctype := resp.Header.Get("Content-Type")
	if ctype != "" {
		fmt.Fprintf(&sb, "Content-Type: %s\n", ctype)
	}
	if len(hops) > 0 {
		fmt.Fprintf(&sb, "Redirected from: %s\n", u)
	}
	if err != nil {
		fmt.Fprintf(&sb, "[the body was cut short: %v]\n", err)
	}
	if cut {
		fmt.Fprintf(&sb, "[the body is larger than %s, the limit web_fetch reads; only the first %s were read]\n", sizeText(int(limit)), sizeText(int(limit)))
	}
	sb.WriteByte('\n')
	sb.WriteString(render(ctx, body, ctype, resp.Request.URL, a.Raw))
	return Result{Content: sb.String(), IsError: resp.StatusCode >= 400}
}

func via(hops []string) string {
	if len(hops) == 0 {
		return ""
	}
	return " (redirected through " + strings.Join(hops, " -> ") + ")"
}

// render turns a body into text for the model: HTML to Markdown (links
// made absolute against the final URL), text as is, binary described.
func render(ctx context.Context, body []byte, ctype string, final *url.URL, raw bool) string {
	mt, _, _ := mime.ParseMediaType(ctype)
	if mt == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	textual := strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+json") ||
		mt == "application/json" || mt == "application/xml" || mt == "application/javascript" || mt == "application/xhtml+xml"
	if !textual {
		return fmt.Sprintf("[%d bytes of %s: not text, not shown]", len(body), mt)
	}
	// Decode to UTF-8 from the declared (or sniffed) charset.
	body = decodeBody(body, ctype)
	if raw || (mt != "text/html" && mt != "application/xhtml+xml") {
		return string(body)
	}
	note := ""
	if len(body) > maxHTMLConvert {
		// The converter's tree costs some forty times the page: past
		// the bound, the page is cut (at a character) and said so.
		n := maxHTMLConvert
		for n > 0 && !utf8.RuneStart(body[n]) {
			n--
		}
		body = body[:n]
		note = fmt.Sprintf("[the page is larger than %s, the most web_fetch converts to Markdown: its first %s follow, converted; raw: true returns the whole body read]\n", sizeText(maxHTMLConvert), sizeText(maxHTMLConvert))
	}
	md, err := htmltomarkdown.ConvertString(string(body), converter.WithContext(ctx), converter.WithDomain(final.Scheme+"://"+final.Host))
	if err != nil {
		return fmt.Sprintf("[the HTML could not be converted to Markdown (%v); the raw body follows]\n%s", err, body)
	}
	return note + md
}

// loopbackHost says whether host names the loopback: localhost, a name
// under .localhost, a loopback address, or the unspecified one (0.0.0.0,
// ::), which dev servers print (python -m http.server) and which reaches
// the local host.
func loopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// refuseTransport is the way out of a session without a proxy.
type refuseTransport struct{}

func (refuseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, &errProxyRefused{reason: "this session has no network proxy, so only the sandbox's loopback can be fetched"}
}

// insideTransport fetches loopback URLs inside the walls with curl, and
// hands every other request to next (the proxy). Only the URL the model
// gave, or a redirect from one loopback URL to another, goes inside: a
// site that redirects to localhost does not reach the agent's servers.
type insideTransport struct {
	sb      sandbox.Sandbox
	limit   int64
	timeout time.Duration
	next    http.RoundTripper
}

func (t *insideTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !loopbackHost(r.URL.Hostname()) || (r.Response != nil && !loopbackHost(r.Response.Request.URL.Hostname())) {
		return t.next.RoundTrip(r)
	}
	// -i --raw: the status line, the headers and the body as sent, for
	// http.ReadResponse; no redirects (each hop is decided here); the
	// proxy off (this is the sandbox's own loopback); -k: a dev server's
	// self-signed certificate proves nothing on one's own loopback.
	args := []string{"curl", "-sS", "-i", "--raw", "-k", "--noproxy", "'*'", "--max-redirs", "0",
		"--max-time", fmt.Sprint(int(t.timeout.Seconds())), "-A", "harness-web-fetch"}
	for _, h := range []string{"Accept"} {
		if v := r.Header.Get(h); v != "" {
			args = append(args, "-H", shellquote.Quote(h+": "+v))
		}
	}
	args = append(args, "--", shellquote.Quote(r.URL.String()))
	// curl is stopped once it printed more than the body bound (and room
	// for the head): a server streaming without end does not keep it
	// running, and what it printed is read as a body cut at the bound.
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	out := &capWriter{limit: t.limit + 1<<20, full: stop}
	var errb capWriter
	errb.limit = 4096
	// Under the session's walls, not the read-only variant: that one has a
	// launcher, so a network namespace, of its own, where the background
	// servers are not. The command is harness's own and writes nothing.
	cmd := sandbox.Cmd{Script: strings.Join(args, " "), Timeout: t.timeout + 5*time.Second, Stdout: out, Stderr: &errb}
	res, err := t.sb.Run(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("fetching inside the sandbox: %w", err)
	}
	msg := strings.TrimSpace(string(errb.buf))
	switch {
	case res.ExitCode == 127:
		return nil, fmt.Errorf("a loopback URL is fetched inside the sandbox with curl, and curl is not installed there")
	case len(out.buf) == 0 && res.ExitCode == 7:
		port := r.URL.Port()
		switch {
		case port != "":
		case r.URL.Scheme == "https":
			port = "443"
		default:
			port = "80"
		}
		return nil, fmt.Errorf("nothing answers at %s inside the sandbox (%s): the sandbox's loopback is its own. If the server was started by a background command, is it running and listening on that port (bash_output shows its log)? If it runs on the user's machine, the user can let the session reach it with --allow-net 127.0.0.1:%s (or \"allow net 127.0.0.1:%s\" in .agents/permissions), which forwards that port inside", r.URL.Host, msg, port, port)
	case len(out.buf) == 0:
		return nil, fmt.Errorf("fetching inside the sandbox failed (curl exit code %d): %s", res.ExitCode, msg)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out.buf)), r)
	if err != nil {
		return nil, fmt.Errorf("the answer from inside the sandbox is not HTTP (%v): %s", err, msg)
	}
	return resp, nil
}

// capWriter keeps the first limit bytes written and drops the rest;
// full, when set, is called once when something is dropped.
type capWriter struct {
	buf   []byte
	limit int64
	full  func()
}

func (c *capWriter) Write(p []byte) (int, error) {
	room := c.limit - int64(len(c.buf))
	if room > 0 {
		c.buf = append(c.buf, p[:min(int64(len(p)), room)]...)
	}
	if int64(len(p)) > room && c.full != nil {
		c.full()
		c.full = nil
	}
	return len(p), nil
}
