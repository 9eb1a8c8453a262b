package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/shellquote"
)

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

// connect starts the server and gives its pipes: what it writes (its
// stdout) and what it reads (its stdin), for the SDK's IOTransport.
func (t *stdioTransport) connect() (io.ReadCloser, io.WriteCloser, error) {
	if t.sb == nil {
		return nil, nil, errors.New("no sandbox to run it in")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background()) // the session's, not the connect call's
	t.cancel = cancel
	go func() {
		defer close(t.done)
		res, err := t.sb.Run(runCtx, sandbox.Cmd{Script: script(t.def), Label: "MCP server " + t.def.Name + ": " + t.def.Summary(), Dir: t.def.Cwd, Stdin: inR, Stdout: outW, Stderr: &t.stderr, Timeout: sessionLong})
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
		return nil, nil, fmt.Errorf("passing its environment: %w", err)
	}
	return outR, inW, nil
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

// killedForMode reports whether harness killed the server because the
// session's mode changed its walls (mode.go).
func (t *stdioTransport) killedForMode() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.killedFor != ""
}
