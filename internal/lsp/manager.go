package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
)

// Default bounds (Options leaves them zero).
const (
	// DefaultWait is the longest an edit waits for its file's fresh
	// diagnostics once the server runs.
	DefaultWait = 3 * time.Second
	// DefaultStartWait is the longest the first edit of a language waits
	// for its server to start (initialize answered); the server goes on
	// starting after it, for the next edit.
	DefaultStartWait = 15 * time.Second
	// DefaultSettle is how long after a file's fresh diagnostics more of
	// them may come (a server that publishes syntax errors, then type
	// errors) before the edit takes what it has.
	DefaultSettle = 300 * time.Millisecond
	// DefaultMaxBytes caps the diagnostics appended to one tool result.
	DefaultMaxBytes = 4 << 10
	// maxOtherFiles caps the lines about other files' errors.
	maxOtherFiles = 10
)

// Options configure a Manager.
type Options struct {
	// Sandbox runs the servers, inside its walls, as it runs commands.
	Sandbox sandbox.Sandbox
	// Project is the workspace root the servers are given.
	Project string
	// Servers is the table (Builtin, with ParseSetting applied).
	Servers []Server
	// Path is the PATH the servers are looked up on.
	Path string
	// Notify, when set, is told once per language when its server is
	// missing, will not start or stops.
	Notify func(text string)
	// Warnings is how many warnings an edit's result may list; 0 lists
	// none (errors only).
	Warnings int
	// Wait, StartWait, Settle and MaxBytes: zero means the default.
	Wait, StartWait, Settle time.Duration
	MaxBytes                int
}

// Manager runs one session's language servers, one per language, started
// the first time a file of that language is edited.
type Manager struct {
	o Options

	mu      sync.Mutex
	clients map[*Server]*client // a nil client: the language has none this session
	closed  bool
}

// New returns a Manager; no server starts until an edit needs one.
func New(o Options) *Manager {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.StartWait <= 0 {
		o.StartWait = DefaultStartWait
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return &Manager{o: o, clients: map[*Server]*client{}}
}

// Diagnose tells the server of path's language that the file now holds
// text and returns what the server reports for that version, formatted
// for the model: "" when the file has no error (or no server answers in
// time). It returns within the bounds of Options whatever the server does.
func (m *Manager) Diagnose(ctx context.Context, path string, text []byte) string {
	if m == nil {
		return ""
	}
	path = filepath.Clean(path)
	s := serverFor(m.o.Servers, path)
	if s == nil {
		return ""
	}
	c, fresh := m.client(s)
	if c == nil {
		return ""
	}
	wait := m.o.Wait
	if fresh {
		wait += m.o.StartWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := c.ready(ctx); err != nil {
		return ""
	}
	r, ok := c.change(ctx, path, string(text), m.o.Settle)
	if !ok {
		return ""
	}
	return format(r, m.o.Project, string(text), m.o.Warnings, m.o.MaxBytes)
}

// client returns the language's client, starting it the first time;
// fresh says this call started it. nil: no server for it this session.
func (m *Manager) client(s *Server) (c *client, fresh bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, false
	}
	if c, ok := m.clients[s]; ok {
		if c != nil && c.dead() {
			return nil, false
		}
		return c, false
	}
	argv, err := find(s, m.o.Path)
	if err != nil {
		m.clients[s] = nil
		m.notify(fmt.Sprintf("no %s language server: %v; edits of %s files get no diagnostics", s.Name, err, s.Extensions[0]))
		return nil, false
	}
	c = startClient(m.o, s, argv, m.notify)
	m.clients[s] = c
	return c, true
}

func (m *Manager) notify(text string) {
	if m.o.Notify != nil {
		m.o.Notify(text)
	}
}

// Follow is told of a switch into (readOnly) or out of plan mode: into
// it, the running servers, started under the writable walls, are stopped
// with all they started, and the next edit of their language starts them
// again under the walls then in force. It says what it stopped.
func (m *Manager) Follow(readOnly bool) []string {
	if m == nil || !readOnly {
		return nil
	}
	m.mu.Lock()
	var cs []*client
	for s, c := range m.clients {
		if c != nil {
			cs = append(cs, c)
			delete(m.clients, s)
		}
	}
	m.mu.Unlock()
	var notes []string
	for _, c := range cs {
		if !c.dead() {
			notes = append(notes, fmt.Sprintf("stopped the %s language server, which ran under the writable walls; the next edit of a %s file starts it again",
				c.server.Name, c.server.Extensions[0]))
		}
		c.stop()
	}
	return notes
}

// Close stops every server with all it started, and waits for that.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	m.closed = true
	var cs []*client
	for _, c := range m.clients {
		if c != nil {
			cs = append(cs, c)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop() }()
	}
	wg.Wait()
	return nil
}
