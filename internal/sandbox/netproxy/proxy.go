package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is the sandbox's way out: an HTTP/1.1 proxy (CONNECT tunnels and
// absolute-form plain HTTP) that runs in the harness process on the host.
// Commands have no network of their own; inside the sandbox's network
// namespace the launcher listens on ProxyPort on loopback and hands each
// connection it accepts to the host over its control channel, where Serve
// takes it. Nothing is intercepted and no credential is added.
//
// The same port speaks SOCKS5 too (socks.go: CONNECT only, no
// authentication), told apart by the first byte.
//
// Safe by construction: names are resolved here, on the host, and the
// connection goes to the very address that was checked (a name cannot
// rebind between the check and the dial); loopback, private, link-local,
// multicast and cloud-metadata addresses are refused unless the deciding
// rule names that host and port exactly; an IP literal is only reached by
// a rule naming it (Decide's business); a CONNECT tunnel allowed by a
// pattern must open with a TLS ClientHello whose server name is the host
// asked for (any other protocol needs a rule naming host and port,
// which also skips the check); connections are bounded in
// number and closed when idle. Every connection is recorded.
type Proxy struct {
	// Decide is asked once per connection, before any name is resolved;
	// it may ask the user, and the connection waits. AskedBy(ctx) names
	// the commands running when the connection came.
	Decide func(ctx context.Context, host string, port int) ConnVerdict
	// Record, when set, receives every connection once it is over.
	Record func(ConnRecord)
	// LookupIP resolves a name; nil means the system resolver.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address that passed the checks; nil means TCP.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Reachable says whether an address may be dialled without an exact
	// rule; nil means PublicAddr.
	Reachable func(netip.Addr) bool
	// MaxConns bounds the connections open at once (default 64);
	// IdleTimeout closes a tunnel quiet in both directions (default 5 min).
	MaxConns    int
	IdleTimeout time.Duration
	// Loopback are the host loopback ports commands reach as if they
	// were their own localhost's (loopback.go); set before Open.
	Loopback []LoopbackForward

	once sync.Once
	sem  chan struct{}

	mu      sync.Mutex
	recent  []ConnRecord // the last maxRecent, for /network
	seq     int          // connections finished so far
	running map[*int]string
}

type askedByKey struct{}

// AskedBy names the command (or commands, when several run at once) that
// were running when the connection Decide is deciding came in.
func AskedBy(ctx context.Context) string {
	s, _ := ctx.Value(askedByKey{}).(string)
	return s
}

// WithAsker names who asks for the connections served under ctx (a host
// tool such as web_fetch, with its URL), so a question names it rather
// than the commands that happen to be running.
func WithAsker(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, askedByKey{}, who)
}

// Started notes a running command for AskedBy; the returned func ends it.
func (p *Proxy) Started(script string) func() {
	if p == nil {
		return func() {}
	}
	if len(script) > 200 {
		script = script[:200] + "…"
	}
	id := new(int)
	p.mu.Lock()
	if p.running == nil {
		p.running = map[*int]string{}
	}
	p.running[id] = script
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.running, id)
		p.mu.Unlock()
	}
}

func (p *Proxy) askedBy() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.running {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, " | ")
}

// ConnVerdict is Decide's answer.
type ConnVerdict struct {
	Allowed bool
	// Exact: the deciding rule names this host and port exactly, so
	// private addresses may be reached (a local database).
	Exact  bool
	Rule   string
	Reason string // why not, for the command and the log
}

// ConnRecord is one connection through the proxy.
type ConnRecord struct {
	Time     time.Time     `json:"time"`
	Method   string        `json:"method"` // CONNECT or the HTTP method
	Host     string        `json:"host"`
	Port     int           `json:"port"`
	Addr     string        `json:"addr,omitempty"` // the address connected, when one was
	Verdict  string        `json:"verdict"`        // "allowed" or "refused"
	Rule     string        `json:"rule,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Up       int64         `json:"bytes_up"`   // from the command
	Down     int64         `json:"bytes_down"` // to the command
	Duration time.Duration `json:"duration"`
}

func (r ConnRecord) String() string {
	s := fmt.Sprintf("%s %s %s", r.Verdict, r.Method, net.JoinHostPort(r.Host, strconv.Itoa(r.Port)))
	if r.Addr != "" {
		s += " via " + r.Addr
	}
	if r.Verdict == "allowed" {
		s += fmt.Sprintf(", %d B up, %d B down, %s", r.Up, r.Down, r.Duration.Round(time.Millisecond))
	}
	if r.Rule != "" {
		s += " (" + r.Rule + ")"
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// ProxyPort is where the launcher listens inside the sandbox's network
// namespace, which is the sandbox's own: no other program shares it.
const ProxyPort = 3128

const (
	maxRecent       = 200
	headerTimeout   = 30 * time.Second
	dialTimeout     = 15 * time.Second
	maxClientHello  = 1 << 14
	defaultMaxConns = 64
	maxHeader       = 64 << 10
)

// capReader fails once n bytes are read, until off is called.
type capReader struct {
	mu   sync.Mutex
	r    io.Reader
	n    int64
	free bool
}

func (c *capReader) off() {
	c.mu.Lock()
	c.free = true
	c.mu.Unlock()
}

func (c *capReader) Read(p []byte) (int, error) {
	c.mu.Lock()
	limited := !c.free
	n := c.n
	c.mu.Unlock()
	if limited {
		if n <= 0 {
			return 0, errors.New("request head larger than 64 KiB")
		}
		if int64(len(p)) > n {
			p = p[:n]
		}
	}
	k, err := c.r.Read(p)
	if limited {
		c.mu.Lock()
		c.n -= int64(k)
		c.mu.Unlock()
	}
	return k, err
}

// ProxyEnv points every common client at the proxy listening on port:
// the HTTP variables at its HTTP face, ALL_PROXY (read by curl and libcurl
// users for what no protocol's variable covers) at its SOCKS5 face, with
// names resolved by the proxy (socks5h).
func ProxyEnv(port int) []string {
	hp := "127.0.0.1:" + strconv.Itoa(port)
	var out []string
	for _, kv := range [][2]string{{"HTTPS_PROXY", "http://" + hp}, {"HTTP_PROXY", "http://" + hp}, {"ALL_PROXY", "socks5h://" + hp}} {
		out = append(out, kv[0]+"="+kv[1], strings.ToLower(kv[0])+"="+kv[1])
	}
	return append(out, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}

// Recent returns the connections recorded lately, oldest first.
func (p *Proxy) Recent() []ConnRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ConnRecord(nil), p.recent...)
}

// Mark and since let a command's run collect the refusals it caused.
func (p *Proxy) Mark() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

func (p *Proxy) Since(mark int) []ConnRecord {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.seq - mark
	if n > len(p.recent) {
		n = len(p.recent)
	}
	return append([]ConnRecord(nil), p.recent[len(p.recent)-n:]...)
}

func (p *Proxy) record(r ConnRecord) {
	p.mu.Lock()
	p.seq++
	p.recent = append(p.recent, r)
	if len(p.recent) > maxRecent {
		p.recent = append([]ConnRecord(nil), p.recent[len(p.recent)-maxRecent:]...)
	}
	p.mu.Unlock()
	if p.Record != nil {
		p.Record(r)
	}
}

// errRefused carries an HTTP status and the reason to the command.
type errRefused struct {
	status int
	reason string
}

func (e *errRefused) Error() string { return e.reason }

func refuse(status int, format string, args ...any) error {
	return &errRefused{status: status, reason: fmt.Sprintf(format, args...)}
}

// Serve handles one connection a command opened to the proxy, and closes it.
// The first byte says the protocol: 5 is a SOCKS5 greeting (socks.go),
// anything else an HTTP request.
func (p *Proxy) Serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	p.once.Do(func() {
		n := p.MaxConns
		if n <= 0 {
			n = defaultMaxConns
		}
		p.sem = make(chan struct{}, n)
	})
	rec := ConnRecord{Time: time.Now(), Verdict: "refused"}
	recorded := false
	settle := func() {
		if !recorded {
			recorded = true
			rec.Duration = time.Since(rec.Time)
			p.record(rec)
		}
	}
	defer settle()
	// A refusal is recorded before the command hears of it: a command that
	// exits on the refusal must find it in the record, where the end of the
	// command reads it to say what was refused and how to allow it.
	refused := func(answer func()) { settle(); answer() }
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	// The request head is bounded (ReadRequest alone would take a header
	// line of any length); the body and the tunnel are not.
	capped := &capReader{r: c, n: maxHeader}
	br := bufio.NewReader(capped)
	if b, err := br.Peek(1); err == nil && b[0] == socksVersion {
		rec.Method = "SOCKS5"
		host, port, err := readSOCKS(c, br)
		capped.off()
		if err != nil {
			rec.Host, rec.Port, rec.Reason = host, port, err.Error()
			return
		}
		if !p.acquire() {
			rec.Host, rec.Port, rec.Reason = host, port, "too many connections at once"
			refused(func() { socksReply(c, http.StatusServiceUnavailable) })
			return
		}
		defer p.release()
		err = p.tunnel(ctx, c, br, host, port, socksAnswer{c}, &rec)
		var ref *errRefused
		if errors.As(err, &ref) {
			rec.Verdict, rec.Reason = "refused", ref.reason
			refused(func() { socksReply(c, ref.status) })
		}
		return
	}
	req, err := http.ReadRequest(br)
	capped.off()
	if err != nil {
		rec.Method, rec.Reason = "?", "not an HTTP proxy request: "+err.Error()
		refused(func() { writeStatus(c, http.StatusBadRequest, "harness proxy: "+rec.Reason) })
		return
	}
	rec.Method = req.Method
	if !p.acquire() {
		rec.Reason = "too many connections at once"
		refused(func() { writeStatus(c, http.StatusServiceUnavailable, "harness proxy: "+rec.Reason) })
		return
	}
	defer p.release()
	err = p.serve(ctx, c, br, req, &rec)
	var ref *errRefused
	if errors.As(err, &ref) {
		rec.Verdict, rec.Reason = "refused", ref.reason
		refused(func() { writeStatus(c, ref.status, "harness: "+ref.reason) })
	}
}

// ServeListener serves every connection ln accepts, each on its own,
// until ln is closed.
func (p *Proxy) ServeListener(ln net.Listener) {
	AcceptEach(ln, func(c net.Conn) error {
		go p.Serve(context.Background(), c)
		return nil
	})
}

// AcceptEach hands every connection ln accepts to handle, until ln is
// closed or handle fails.
func AcceptEach(ln net.Listener, handle func(net.Conn) error) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		if handle(c) != nil {
			return
		}
	}
}

func (p *Proxy) acquire() bool {
	select {
	case p.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (p *Proxy) release() { <-p.sem }

// answer tells a tunnel's client that it is open; the protocols differ.
type answer interface{ established() error }

type httpAnswer struct{ c net.Conn }

func (a httpAnswer) established() error {
	_, err := io.WriteString(a.c, "HTTP/1.1 200 Connection established\r\n\r\n")
	return err
}

func (p *Proxy) serve(ctx context.Context, c net.Conn, br *bufio.Reader, req *http.Request, rec *ConnRecord) error {
	var hostport string
	switch {
	case req.Method == http.MethodConnect:
		hostport = req.RequestURI
	case req.URL != nil && req.URL.IsAbs() && req.URL.Scheme == "http":
		hostport = req.URL.Host
		if req.URL.Port() == "" {
			hostport = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	default:
		return refuse(http.StatusBadRequest, "the proxy takes CONNECT host:port, plain http:// requests in absolute form, or SOCKS5 CONNECT (%s %s)", req.Method, req.RequestURI)
	}
	host, portStr, err := net.SplitHostPort(hostport)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < 1 || port > 65535 || host == "" {
		return refuse(http.StatusBadRequest, "bad target %q", hostport)
	}
	if req.Method == http.MethodConnect {
		return p.tunnel(ctx, c, br, host, port, httpAnswer{c}, rec)
	}
	ok, _, err := p.admit(ctx, host, port, rec)
	if err != nil {
		return err
	}
	upstream, err := p.connect(ctx, ok, rec)
	if err != nil {
		return err
	}
	defer upstream.Close()

	// Plain HTTP: one request, origin-form, Host the authority decided on.
	req.RequestURI = ""
	req.Host = req.URL.Host
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Upgrade"} {
		req.Header.Del(h)
	}
	req.Close = true
	rec.Verdict = "allowed"
	cw := &countWriter{w: upstream}
	upstream.SetWriteDeadline(time.Now().Add(p.idle()))
	if err := req.Write(cw); err != nil {
		rec.Up = cw.n
		return nil
	}
	rec.Up = cw.n
	c.SetReadDeadline(time.Time{})
	rec.Down = copyIdle(c, upstream, p.idle())
	return nil
}

// admit decides host:port and resolves the name on the host: the
// addresses that may be dialled, or a refusal.
func (p *Proxy) admit(ctx context.Context, host string, port int, rec *ConnRecord) ([]netip.Addr, ConnVerdict, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	rec.Host, rec.Port = host, port
	if !validHostName(host) {
		return nil, ConnVerdict{}, refuse(http.StatusBadRequest, "bad host name %q", host)
	}
	if AskedBy(ctx) == "" {
		ctx = WithAsker(ctx, p.askedBy())
	}
	v := p.Decide(ctx, host, port)
	rec.Rule = v.Rule
	if !v.Allowed {
		return nil, v, refuse(http.StatusForbidden, "%s", v.Reason)
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, v, refuse(http.StatusBadGateway, "cannot resolve %s: %v", host, err)
	}
	reachable := p.Reachable
	if reachable == nil {
		reachable = PublicAddr
	}
	var ok []netip.Addr
	for _, a := range addrs {
		if v.Exact || reachable(a) {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		hp := net.JoinHostPort(host, strconv.Itoa(port))
		return nil, v, refuse(http.StatusForbidden, "%s resolves to %s, a loopback, private, link-local or metadata address, which only a rule naming %s exactly reaches (allow net %s)",
			host, addrs[0], hp, hp)
	}
	return ok, v, nil
}

// connect dials the first of addrs that answers.
func (p *Proxy) connect(ctx context.Context, addrs []netip.Addr, rec *ConnRecord) (net.Conn, error) {
	upstream, addr, err := p.dial(ctx, addrs, rec.Port)
	if err != nil {
		return nil, refuse(http.StatusBadGateway, "cannot connect to %s: %v", net.JoinHostPort(rec.Host, strconv.Itoa(rec.Port)), err)
	}
	rec.Addr = addr.String()
	return upstream, nil
}

// tunnel opens a byte stream to host:port for an HTTP CONNECT or a SOCKS5
// CONNECT, after the same checks.
func (p *Proxy) tunnel(ctx context.Context, c net.Conn, br *bufio.Reader, host string, port int, ans answer, rec *ConnRecord) error {
	ok, v, err := p.admit(ctx, host, port, rec)
	if err != nil {
		return err
	}
	host = rec.Host
	if !v.Exact {
		// A tunnel allowed by a pattern: the ClientHello must name the
		// host asked for before anything reaches it. (The answer comes
		// first, as the client sends nothing before it; a failure after
		// it can only close the tunnel.)
		if err := ans.established(); err != nil {
			return nil
		}
		c.SetReadDeadline(time.Now().Add(headerTimeout))
		hello, sni, err := readClientHello(br)
		c.SetReadDeadline(time.Time{})
		switch {
		case err != nil:
			rec.Verdict, rec.Reason = "refused", "the tunnel did not start with a TLS ClientHello ("+err.Error()+"); a tunnel of another protocol needs a rule naming the host and port (allow net "+net.JoinHostPort(host, strconv.Itoa(port))+")"
			return nil
		case sni != host && !(sni == "" && isIPLiteral(host)):
			rec.Verdict, rec.Reason = "refused", fmt.Sprintf("the TLS server name %q is not the host asked for (%s)", sni, host)
			return nil
		}
		upstream, err := p.connect(ctx, ok, rec)
		if err != nil {
			rec.Verdict, rec.Reason = "refused", err.Error()
			return nil
		}
		defer upstream.Close()
		rec.Verdict = "allowed"
		if _, err := upstream.Write(hello); err != nil {
			return nil
		}
		rec.Up += int64(len(hello))
		p.splice(c, br, upstream, rec)
		return nil
	}
	// A rule naming host and port: any protocol (a database speaks first,
	// TLS or not), no server name to check.
	upstream, err := p.connect(ctx, ok, rec)
	if err != nil {
		return err
	}
	defer upstream.Close()
	if err := ans.established(); err != nil {
		return nil
	}
	c.SetReadDeadline(time.Time{})
	rec.Verdict = "allowed"
	p.splice(c, br, upstream, rec)
	return nil
}

func (p *Proxy) idle() time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return 5 * time.Minute
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	lookup := p.LookupIP
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errors.New("no addresses")
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, netip.AddrPort, error) {
	dial := p.Dial
	if dial == nil {
		dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", a.String())
		}
	}
	var last error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		c, err := dial(dctx, ap)
		cancel()
		if err == nil {
			return c, ap, nil
		}
		last = err
	}
	return nil, netip.AddrPort{}, last
}

// splice copies both ways until either side ends or both are idle.
func (p *Proxy) splice(c net.Conn, br *bufio.Reader, upstream net.Conn, rec *ConnRecord) {
	idle := p.idle()
	var wg sync.WaitGroup
	var up, down int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		down = copyIdle(c, upstream, idle)
		closeWrite(c)
	}()
	up = copyIdle(upstream, br, idle, c)
	closeWrite(upstream)
	wg.Wait()
	rec.Up += up
	rec.Down += down
}

// copyIdle copies src to dst until EOF, an error, or idle without data.
// The deadline is set on src's connection (srcConn when src is a reader
// over one).
func copyIdle(dst io.Writer, src io.Reader, idle time.Duration, srcConn ...net.Conn) int64 {
	var dl interface{ SetReadDeadline(time.Time) error }
	if c, ok := src.(net.Conn); ok {
		dl = c
	} else if len(srcConn) > 0 {
		dl = srcConn[0]
	}
	buf := make([]byte, 32<<10)
	var n int64
	for {
		if dl != nil {
			dl.SetReadDeadline(time.Now().Add(idle))
		}
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return n
			}
			n += int64(k)
		}
		if err != nil {
			return n
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (w *countWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.n += int64(n)
	return n, err
}

func writeStatus(c net.Conn, status int, msg string) {
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	body := msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Harness-Proxy: refused\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

func isIPLiteral(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// validHostName accepts DNS names and IP literals, nothing with spaces,
// slashes, userinfo or a port inside.
func validHostName(h string) bool {
	if isIPLiteral(h) {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// PublicAddr reports whether a is an ordinary public unicast address:
// not loopback, private (RFC 1918, unique local), link-local (cloud
// metadata lives there), carrier-grade NAT (Alibaba's metadata), shared,
// benchmarking, reserved, multicast or unspecified, and not an IPv6 form
// wrapping one of those.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	if a.Is6() {
		b := a.As16()
		// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
		if netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
			return PublicAddr(netip.AddrFrom4([4]byte(b[12:16])))
		}
		if b[0] == 0x20 && b[1] == 0x02 {
			return PublicAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return true
}

var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "::1/128", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// readClientHello reads the first TLS record of a tunnel, which must be a
// ClientHello, and returns its bytes and server name ("" when it names
// none).
func readClientHello(r *bufio.Reader) ([]byte, string, error) {
	hdr, err := r.Peek(5)
	if err != nil {
		return nil, "", fmt.Errorf("no TLS record: %w", err)
	}
	if hdr[0] != 0x16 || hdr[1] != 3 {
		return nil, "", errors.New("not a TLS handshake")
	}
	n := int(binary.BigEndian.Uint16(hdr[3:5]))
	if n < 4 || n > maxClientHello {
		return nil, "", errors.New("bad TLS record length")
	}
	rec := make([]byte, 5+n)
	if _, err := io.ReadFull(r, rec); err != nil {
		return nil, "", fmt.Errorf("short TLS record: %w", err)
	}
	sni, err := parseSNI(rec[5:])
	return rec, sni, err
}

// parseSNI finds the server_name extension of a ClientHello handshake
// message that fits in one record (every client's does: it is under 2 kB
// even with post-quantum key shares).
func parseSNI(m []byte) (string, error) {
	bad := errors.New("malformed ClientHello")
	if len(m) < 4 || m[0] != 1 {
		return "", errors.New("the first handshake message is not a ClientHello")
	}
	l := int(m[1])<<16 | int(m[2])<<8 | int(m[3])
	if l > len(m)-4 {
		return "", errors.New("the ClientHello spans several records")
	}
	b := m[4 : 4+l]
	skip := func(n int) bool {
		if n > len(b) {
			return false
		}
		b = b[n:]
		return true
	}
	vec := func(lenBytes int) ([]byte, bool) {
		if len(b) < lenBytes {
			return nil, false
		}
		n := 0
		for i := 0; i < lenBytes; i++ {
			n = n<<8 | int(b[i])
		}
		if len(b) < lenBytes+n {
			return nil, false
		}
		v := b[lenBytes : lenBytes+n]
		b = b[lenBytes+n:]
		return v, true
	}
	if !skip(2 + 32) { // version, random
		return "", bad
	}
	if _, ok := vec(1); !ok { // session id
		return "", bad
	}
	if _, ok := vec(2); !ok { // cipher suites
		return "", bad
	}
	if _, ok := vec(1); !ok { // compression
		return "", bad
	}
	if len(b) == 0 {
		return "", nil // no extensions
	}
	exts, ok := vec(2)
	if !ok {
		return "", bad
	}
	for len(exts) >= 4 {
		typ := int(exts[0])<<8 | int(exts[1])
		n := int(exts[2])<<8 | int(exts[3])
		if len(exts) < 4+n {
			return "", bad
		}
		data := exts[4 : 4+n]
		exts = exts[4+n:]
		if typ != 0 {
			continue
		}
		// server_name_list: u16 length, then (type u8, name u16-vector)...
		if len(data) < 2 {
			return "", bad
		}
		list := data[2:]
		for len(list) >= 3 {
			nt := list[0]
			nl := int(list[1])<<8 | int(list[2])
			if len(list) < 3+nl {
				return "", bad
			}
			name := list[3 : 3+nl]
			list = list[3+nl:]
			if nt == 0 {
				return strings.TrimSuffix(strings.ToLower(string(name)), "."), nil
			}
		}
		return "", bad
	}
	return "", nil
}
