package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/shellquote"
)

// Bounds of a server's life.
const (
	// initBound is how long a server may take to answer initialize.
	initBound = time.Minute
	// sessionLong is a server's timeout: it runs until the session ends.
	sessionLong = 30 * 24 * time.Hour
	// maxKept bounds the diagnostics kept of one file.
	maxKept = 500
)

// client is one running language server.
type client struct {
	server *Server
	argv   []string
	o      Options
	notify func(string)

	cancel  context.CancelFunc
	runDone chan struct{}
	stderr  tail
	conn    *conn
	started chan struct{} // closed once initialize is answered or failed
	initErr error

	sendMu sync.Mutex // versions go out in order
	mu     sync.Mutex
	docs   map[string]int // open documents: path → last version sent
	diags  map[string]published
	seq    uint64
	bump   chan struct{} // closed (and replaced) on every publish
	told   bool          // a failure is said once
	exit   string        // how the process ended, once it has
}

// published is a file's latest diagnostics.
type published struct {
	version *int
	seq     uint64
	items   []diagnostic
}

// startClient starts argv inside the sandbox and initializes it in the
// background.
func startClient(o Options, s *Server, argv []string, notify func(string)) *client {
	c := &client{server: s, argv: argv, o: o, notify: notify, runDone: make(chan struct{}), started: make(chan struct{}),
		docs: map[string]int{}, diags: map[string]published{}, bump: make(chan struct{})}
	inR, inW, err := os.Pipe()
	if err != nil {
		c.fail(fmt.Errorf("a pipe: %w", err))
		return c
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		c.fail(fmt.Errorf("a pipe: %w", err))
		return c
	}
	runCtx, cancel := context.WithCancel(context.Background()) // the session's, not the edit's
	c.cancel = cancel
	go c.run(runCtx, inR, outW)
	c.conn = newConn(outR, inW, c.onNotify, c.onRequest, c.broken)
	go c.initialize()
	return c
}

// run runs the server until it exits or harness stops it.
func (c *client) run(ctx context.Context, stdin, stdout *os.File) {
	defer close(c.runDone)
	script := "exec"
	for _, a := range c.argv {
		script += " " + shellquote.Quote(a)
	}
	res, err := c.o.Sandbox.Run(ctx, sandbox.Cmd{Script: script, Dir: c.o.Project, Stdin: stdin, Stdout: stdout, Stderr: &c.stderr, Timeout: sessionLong, NoNet: true})
	stdin.Close()
	stdout.Close() // the connection reads EOF
	var why string
	switch {
	case err != nil:
		why = "could not start: " + err.Error()
	case ctx.Err() != nil:
		why = "stopped by harness"
	default:
		why = fmt.Sprintf("exited with code %d", res.ExitCode)
	}
	if s := c.stderr.String(); s != "" && ctx.Err() == nil {
		why += "; its last output on stderr: " + s
	}
	c.mu.Lock()
	c.exit = why
	c.mu.Unlock()
	if ctx.Err() == nil {
		c.say(fmt.Sprintf("the %s language server (%s) %s; edits of %s files get no diagnostics for the rest of the session",
			c.server.Name, filepath.Base(c.argv[0]), why, c.server.Extensions[0]))
	}
}

func (c *client) initialize() {
	defer close(c.started)
	ctx, cancel := context.WithTimeout(context.Background(), initBound)
	defer cancel()
	root := fileURI(c.o.Project)
	p := initializeParams{ClientInfo: clientInfo{Name: "harness"}, RootURI: root,
		WorkspaceFolders: []workspaceFolder{{URI: root, Name: filepath.Base(c.o.Project)}}, Capabilities: capabilities()}
	var res json.RawMessage
	err := c.conn.call(ctx, "initialize", p, &res)
	if err == nil {
		err = c.conn.notify("initialized", struct{}{})
	}
	if err != nil {
		c.initErr = err
		if !c.dead() {
			c.say(fmt.Sprintf("the %s language server (%s) did not start: %v; edits of %s files get no diagnostics",
				c.server.Name, filepath.Base(c.argv[0]), err, c.server.Extensions[0]))
		}
		c.kill()
	}
}

// broken stops a server that broke the protocol, saying so once.
func (c *client) broken(err error) {
	c.say(fmt.Sprintf("the %s language server (%s) sent what is not LSP (%v) and was stopped; edits of %s files get no diagnostics for the rest of the session",
		c.server.Name, filepath.Base(c.argv[0]), err, c.server.Extensions[0]))
	c.kill()
}

// fail marks a client that could not be started at all.
func (c *client) fail(err error) {
	c.initErr = err
	close(c.started)
	close(c.runDone)
	c.say(fmt.Sprintf("the %s language server could not start: %v", c.server.Name, err))
}

// say tells the user once.
func (c *client) say(text string) {
	c.mu.Lock()
	told := c.told
	c.told = true
	c.mu.Unlock()
	if !told && c.notify != nil {
		c.notify(text)
	}
}

// ready waits for initialize's answer.
func (c *client) ready(ctx context.Context) error {
	select {
	case <-c.started:
		return c.initErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *client) dead() bool {
	select {
	case <-c.runDone:
		return true
	default:
	}
	if c.conn != nil {
		select {
		case <-c.conn.done:
			return true
		default:
		}
	}
	return false
}

func (c *client) onNotify(method string, params json.RawMessage) {
	if method != "textDocument/publishDiagnostics" {
		return // logs and progress: nothing harness shows
	}
	var p publishDiagnosticsParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if len(p.Diagnostics) > maxKept {
		p.Diagnostics = p.Diagnostics[:maxKept]
	}
	c.mu.Lock()
	c.seq++
	c.diags[p.URI] = published{version: p.Version, seq: c.seq, items: p.Diagnostics}
	close(c.bump)
	c.bump = make(chan struct{})
	c.mu.Unlock()
}

// onRequest answers what servers ask of a client: configuration (nulls,
// so each uses its defaults), the workspace folders, and registrations
// and progress tokens (accepted).
func (c *client) onRequest(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		root := fileURI(c.o.Project)
		return []workspaceFolder{{URI: root, Name: filepath.Base(c.o.Project)}}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "harness does not handle " + method}
}

// report is what a server said after one change.
type report struct {
	path   string
	items  []diagnostic
	others map[string][]diagnostic // other files' diagnostics published meanwhile
}

// change sends path's new text and waits for the diagnostics of that
// version, then settle for more; false when none came before ctx ended
// or the server died.
func (c *client) change(ctx context.Context, path, text string, settle time.Duration) (report, bool) {
	uri := fileURI(path)
	c.sendMu.Lock()
	c.mu.Lock()
	v, open := c.docs[path]
	v++
	c.docs[path] = v
	before := c.seq
	c.mu.Unlock()
	var err error
	if open {
		err = c.conn.notify("textDocument/didChange", didChangeParams{TextDocument: versionedTextDocumentIdentifier{URI: uri, Version: v},
			ContentChanges: []contentChange{{Text: text}}})
	} else {
		err = c.conn.notify("textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{URI: uri, LanguageID: languageID(path), Version: v, Text: text}})
	}
	if err == nil {
		// The file is on disk already: servers that check on save do.
		err = c.conn.notify("textDocument/didSave", didSaveParams{TextDocument: textDocumentIdentifier{URI: uri}})
	}
	c.sendMu.Unlock()
	if err != nil {
		return report{}, false
	}
	fresh := func() (published, bool) {
		p, ok := c.diags[uri]
		return p, ok && p.seq > before && (p.version == nil || *p.version >= v)
	}
	// Wait for the first fresh publish, then until none has come for settle.
	var timer <-chan time.Time
	for {
		c.mu.Lock()
		_, got := fresh()
		ch := c.bump
		c.mu.Unlock()
		if got && timer == nil {
			timer = time.After(settle)
		}
		select {
		case <-ch:
			if timer != nil {
				timer = time.After(settle)
			}
			continue
		case <-timer:
		case <-ctx.Done():
			if timer == nil {
				return report{}, false
			}
		case <-c.conn.done:
			if timer == nil {
				return report{}, false
			}
		}
		break
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, _ := fresh()
	r := report{path: path, items: p.items, others: map[string][]diagnostic{}}
	for u, q := range c.diags {
		if u != uri && q.seq > before {
			if op := uriPath(u); op != "" {
				r.others[op] = q.items
			}
		}
	}
	return r, true
}

// kill stops the process at once.
func (c *client) kill() {
	if c.cancel != nil {
		c.cancel()
	}
}

// stop ends the server politely if it answers, else kills it with all it
// started, and waits for that.
func (c *client) stop() {
	if c.conn == nil {
		return
	}
	select {
	case <-c.started:
		if c.initErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if c.conn.call(ctx, "shutdown", nil, nil) == nil {
				_ = c.conn.notify("exit", nil)
			}
			cancel()
		}
	default:
	}
	c.conn.close()
	select {
	case <-c.runDone:
	case <-time.After(500 * time.Millisecond):
	}
	c.kill()
	select {
	case <-c.runDone:
	case <-time.After(10 * time.Second):
	}
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
