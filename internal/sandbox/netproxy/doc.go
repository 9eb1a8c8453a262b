// Package netproxy is the host side of the sandbox's network allowlist:
// one Proxy per session speaking HTTP (CONNECT and absolute-form) and
// SOCKS5 on one port, deciding each connection by the caller's rules
// (Decide), resolving names on the host, dialing only the address it
// checked, refusing private addresses without an exact rule, checking a
// tunnel's TLS server name, and recording every connection (ConnRecord).
// Loopback forwards (loopback.go) serve connections a command made to a
// loopback port a rule names.
//
// How connections reach it from inside the walls (the launcher's control
// channel, the container's unix socket, seatbelt's loopback port) belongs
// to each mechanism in package sandbox; this package depends on none of it.
package netproxy
