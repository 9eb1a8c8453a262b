package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Stream is an exec's attached stdin and output: the connection of its
// POST /exec/{id}/start, which the engine took over (hijacked) once it
// answered. Without a TTY the output is multiplexed (see Demux).
type Stream struct {
	conn net.Conn  // TLS over raw, or raw
	raw  net.Conn  // the unix or TCP connection
	r    io.Reader // the rest of what the engine sent, past its answer's header
}

// Read reads the exec's output.
func (s *Stream) Read(p []byte) (int, error) { return s.r.Read(p) }

// CloseWrite ends the exec's stdin; its output can still be read.
func (s *Stream) CloseWrite() error {
	if tc, ok := s.conn.(*tls.Conn); ok {
		// close_notify, then the end of the TCP stream itself, which is
		// what the engine waits for (tls.Conn leaves the latter open).
		if err := tc.CloseWrite(); err != nil {
			return err
		}
	}
	if cw, ok := s.raw.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the stream both ways.
func (s *Stream) Close() error { return s.conn.Close() }

// ExecAttach starts the created exec execID attached: stdin and output
// over the returned stream, without a TTY. ctx bounds the start only,
// not the stream.
//
// The request asks to upgrade the connection (Connection: Upgrade,
// Upgrade: tcp); the engine answers 101 Switching Protocols, or, before
// API 1.24 or behind some proxies, 200, and then speaks the stream on the
// same connection. So it goes over a connection of its own, not the
// client's pool.
func (c *Client) ExecAttach(ctx context.Context, execID string) (*Stream, error) {
	if err := needID("exec", execID); err != nil {
		return nil, err
	}
	u, err := c.url(ctx, "/exec/"+execID+"/start", nil)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(struct{ Detach, Tty bool }{})
	if err != nil {
		return nil, err
	}
	req, err := c.request(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	conn, raw, err := c.dialStream(ctx)
	if err != nil {
		return nil, err
	}
	// ctx ending during the handshake closes the connection, which ends
	// the write or read below; the stream itself does not depend on ctx.
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { conn.Close(); close(closed) })
	s, err := upgrade(conn, req)
	if s != nil {
		s.raw = raw
	}
	if !stop() {
		<-closed
		return nil, ctx.Err()
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// upgrade sends req on conn and reads the engine's answer: a stream on a
// 101 or a 200, an *Error for a refusal.
func upgrade(conn net.Conn, req *http.Request) (*Stream, error) {
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("exec start: %w", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("exec start: the engine's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode == http.StatusOK:
		// The stream follows the header, part of it perhaps in br.
		return &Stream{conn: conn, r: br}, nil
	case resp.StatusCode >= 400:
		defer resp.Body.Close()
		return nil, responseError(resp)
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("exec start: the engine answered %s, not an upgraded stream", resp.Status)
	}
}
