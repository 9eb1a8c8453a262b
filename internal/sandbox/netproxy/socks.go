package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// SOCKS5 (RFC 1928) on the proxy's port, for clients that speak only it
// (ALL_PROXY=socks5h://…): CONNECT only, no authentication, and the same
// checks as an HTTP CONNECT (Proxy.tunnel). A name is sent as a name
// (socks5h) and resolved on the host like any other; an address literal
// is matched only by a rule naming it.

const socksVersion = 5

// SOCKS5 reply codes.
const (
	socksSucceeded     = 0
	socksFailure       = 1
	socksNotAllowed    = 2
	socksHostUnreach   = 4
	socksCmdUnsupp     = 7
	socksAddrUnsupp    = 8
	socksNoMethod      = 0xff
	socksCmdConnect    = 1
	socksAtypIPv4      = 1
	socksAtypName      = 3
	socksAtypIPv6      = 4
	socksMethodNoAuth  = 0
	socksReplyAddrZero = "\x01\x00\x00\x00\x00\x00\x00" // ATYP IPv4, 0.0.0.0:0
)

// readSOCKS reads a SOCKS5 greeting and CONNECT request from br, answering
// the method negotiation on c, and returns the target. A refusal at this
// stage is answered here too.
func readSOCKS(c net.Conn, br *bufio.Reader) (string, int, error) {
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return "", 0, fmt.Errorf("short SOCKS5 greeting: %w", err)
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, fmt.Errorf("short SOCKS5 greeting: %w", err)
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksMethodNoAuth
	}
	if !noAuth {
		c.Write([]byte{socksVersion, socksNoMethod})
		return "", 0, errors.New("SOCKS5 client offers no method without authentication (the proxy takes no credentials)")
	}
	if _, err := c.Write([]byte{socksVersion, socksMethodNoAuth}); err != nil {
		return "", 0, err
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil {
		return "", 0, fmt.Errorf("short SOCKS5 request: %w", err)
	}
	if req[0] != socksVersion {
		socksCode(c, socksFailure)
		return "", 0, fmt.Errorf("SOCKS version %d in the request", req[0])
	}
	var host string
	switch req[3] {
	case socksAtypIPv4, socksAtypIPv6:
		n := 4
		if req[3] == socksAtypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, fmt.Errorf("short SOCKS5 request: %w", err)
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case socksAtypName:
		l, err := br.ReadByte()
		if err != nil {
			return "", 0, fmt.Errorf("short SOCKS5 request: %w", err)
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, fmt.Errorf("short SOCKS5 request: %w", err)
		}
		host = string(b)
	default:
		socksCode(c, socksAddrUnsupp)
		return "", 0, fmt.Errorf("SOCKS5 address type %d", req[3])
	}
	pb := make([]byte, 2)
	if _, err := io.ReadFull(br, pb); err != nil {
		return host, 0, fmt.Errorf("short SOCKS5 request: %w", err)
	}
	port := int(pb[0])<<8 | int(pb[1])
	if req[1] != socksCmdConnect {
		socksCode(c, socksCmdUnsupp)
		return host, port, fmt.Errorf("SOCKS5 command %d: the proxy takes CONNECT only (no BIND, no UDP)", req[1])
	}
	if port == 0 || host == "" {
		socksCode(c, socksFailure)
		return host, port, fmt.Errorf("bad SOCKS5 target %q", net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return host, port, nil
}

// socksAnswer opens the tunnel the SOCKS5 way.
type socksAnswer struct{ c net.Conn }

func (a socksAnswer) established() error { return socksCode(a.c, socksSucceeded) }

// socksReply answers a refusal decided in HTTP terms with its SOCKS5 code.
func socksReply(c net.Conn, status int) {
	code := byte(socksFailure)
	switch status {
	case http.StatusForbidden:
		code = socksNotAllowed
	case http.StatusBadGateway:
		code = socksHostUnreach
	}
	socksCode(c, code)
}

func socksCode(c net.Conn, code byte) error {
	_, err := c.Write(append([]byte{socksVersion, code, 0}, socksReplyAddrZero...))
	return err
}
