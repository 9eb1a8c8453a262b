package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/permission"
)

// OpenRequest is what the client asked of a session, for Server.Open.
type OpenRequest struct {
	// Cwd is the client's working directory for the session (absolute):
	// the project is found from it, not from the process's directory.
	Cwd string
	// Resume is the id of a session to continue (session/load); "" starts
	// a new one.
	Resume string
	// MCPServers are the client's servers, in harness's mcpServers
	// format (MCPConfig), to start like any configured one.
	MCPServers []MCPServer
	// Prompter asks the client about what the gate would ask the user.
	Prompter permission.Prompter
}

// Server is an ACP agent over one connection. Open builds a harness
// session the way the terminal front ends do (package cli); the server
// drives it.
type Server struct {
	Open    func(ctx context.Context, r OpenRequest) (*app.Session, error)
	Log     io.Writer // notices and errors; never the protocol stream
	Version string

	conn *conn

	mu       sync.Mutex
	sessions map[string]*session
}

// Serve answers the client on in and out until in ends or ctx is done,
// then closes every session (their commands, jobs and MCP servers with
// them).
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.conn = newConn(out)
	s.sessions = map[string]*session{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// When the input ends, running turns are cancelled so serve's wait
	// for them ends.
	done := make(chan error, 1)
	go func() { done <- s.conn.serve(ctx, &cancelOnEOF{r: in, cancel: cancel}, s.handle) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done(): // a signal: the read may block for ever
	}
	s.mu.Lock()
	all := s.sessions
	s.sessions = nil
	s.mu.Unlock()
	for _, ss := range all {
		ss.close()
	}
	return err
}

// cancelOnEOF cancels when the reader ends, so turns in flight stop when
// the client goes away.
type cancelOnEOF struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c *cancelOnEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		c.cancel()
	}
	return n, err
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "harness acp: "+format+"\n", args...)
	}
}

// afterReply is a result with work to do once the reply is written
// (updates the client can only place once it knows the session).
type afterReply struct {
	result any
	after  func()
}

func decode(params json.RawMessage, v any) error {
	if len(params) == 0 {
		params = []byte("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams(err)
	}
	return nil
}

func (s *Server) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return initializeResponse{
			ProtocolVersion: ProtocolVersion,
			AgentCapabilities: agentCapabilities{
				LoadSession: true,
				// Images go to the model as images (when it takes them);
				// embedded resources as text; no audio.
				PromptCapabilities: promptCapabilities{Image: true, EmbeddedContext: true},
				MCPCapabilities:    mcpCapabilities{HTTP: true, SSE: true},
			},
			AgentInfo:   &implementation{Name: "harness", Title: "harness", Version: s.Version},
			AuthMethods: []any{},
		}, nil
	case "authenticate":
		return struct{}{}, nil
	case "session/new":
		var p newSessionRequest
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		return async(func() (any, error) {
			ss, err := s.open(ctx, p.Cwd, "", p.MCPServers)
			if err != nil {
				return nil, err
			}
			return afterReply{
				result: newSessionResponse{SessionID: ss.id, Modes: ss.modes()},
				after:  ss.publishCommands,
			}, nil
		}), nil
	case "session/load":
		var p loadSessionRequest
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		if p.SessionID == "" {
			return nil, invalidParams(errors.New("sessionId is required"))
		}
		// A session open here is closed first: the log has one writer.
		s.mu.Lock()
		old := s.sessions[p.SessionID]
		delete(s.sessions, p.SessionID)
		s.mu.Unlock()
		return async(func() (any, error) {
			if old != nil {
				old.close()
			}
			ss, err := s.open(ctx, p.Cwd, p.SessionID, p.MCPServers)
			if err != nil {
				return nil, err
			}
			ss.replay()
			return afterReply{result: loadSessionResponse{Modes: ss.modes()}, after: ss.publishCommands}, nil
		}), nil
	case "session/prompt":
		var p promptRequest
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		ss, err := s.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return ss.prompt(ctx, p.Prompt)
	case "session/cancel":
		var p cancelNotification
		if decode(params, &p) != nil {
			return nil, nil
		}
		if ss, err := s.session(p.SessionID); err == nil {
			ss.cancelTurn()
		}
		return nil, nil
	case "session/set_mode":
		var p setModeRequest
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		ss, err := s.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		m, err := extend.ParseMode(p.ModeID)
		if err != nil {
			return nil, invalidParams(err)
		}
		// What the switch did reaches the client's log through the
		// session's notices, and the model with the next prompt.
		ss.s.Modes.Set(m)
		return struct{}{}, nil
	}
	if strings.HasPrefix(method, "$/") { // optional notifications
		return nil, nil
	}
	return nil, &RPCError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

func (s *Server) session(id string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return nil, &RPCError{Code: codeInvalidParams, Message: "no session " + id + " is open: start one with session/new or session/load"}
	}
	return ss, nil
}

func (s *Server) open(ctx context.Context, cwd, resume string, servers []MCPServer) (*session, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, invalidParams(fmt.Errorf("cwd must be an absolute path, not %q", cwd))
	}
	ss := &session{srv: s, rejectAlways: map[string]bool{}}
	sess, err := s.Open(ctx, OpenRequest{Cwd: filepath.Clean(cwd), Resume: resume, MCPServers: servers, Prompter: &prompter{ss: ss}})
	if err != nil {
		return nil, err
	}
	ss.s, ss.id = sess, sess.ID
	for _, b := range builtins {
		sess.Slash.Reserve(b.Name) // harness's own name wins over a custom command's
	}
	for _, w := range sess.Warnings {
		s.logf("warning: %s", w.Text)
	}
	sess.SetNotify(func(n noticeT) { s.logf("%s", n.Text) })
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return ss, nil
}

// MCPConfig is servers as an mcpServers document (the format of
// --mcp-config), so they start through the same path, inside the walls,
// as the user's own.
func MCPConfig(servers []MCPServer) ([]byte, error) {
	doc := map[string]mcp.Server{}
	for _, sv := range servers {
		if sv.Name == "" {
			return nil, errors.New("an MCP server without a name")
		}
		m := mcp.Server{Type: sv.Type, Command: sv.Command, Args: sv.Args, URL: sv.URL}
		if m.Type == "" && m.Command != "" {
			m.Type = "stdio"
		}
		if len(sv.Env) > 0 {
			m.Env = map[string]string{}
			for _, e := range sv.Env {
				m.Env[e.Name] = e.Value
			}
		}
		if len(sv.Headers) > 0 {
			m.Headers = map[string]string{}
			for _, h := range sv.Headers {
				m.Headers[h.Name] = h.Value
			}
		}
		doc[sv.Name] = m
	}
	return json.Marshal(map[string]any{"mcpServers": doc})
}

// modeNames are harness's permission modes as the client shows them.
var modeNames = []sessionMode{
	{ID: string(extend.ModeDefault), Name: "Default", Description: "The rules decide; what they do not allow is asked"},
	{ID: string(extend.ModeAcceptEdits), Name: "Accept edits", Description: "File edits in the project without asking; commands by the rules"},
	{ID: string(extend.ModePlan), Name: "Plan", Description: "The project is read-only in the sandbox; the turn ends in a plan"},
}

func (ss *session) modes() sessionModeState {
	return sessionModeState{CurrentModeID: string(ss.s.Modes.Mode()), AvailableModes: modeNames}
}

// publishCommands sends the slash commands: harness's built-ins (those
// an editor can use), custom commands, skills and MCP prompts.
func (ss *session) publishCommands() {
	cmds := append([]availableCommand(nil), builtins...)
	if ss.s.Slash != nil {
		for _, e := range ss.s.Slash.Entries() {
			c := availableCommand{Name: e.Name, Description: e.Detail}
			if c.Description == "" {
				c.Description = e.Kind
			}
			if e.Args != "" {
				c.Input = &commandInput{Hint: e.Args}
			}
			cmds = append(cmds, c)
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	if cmds == nil {
		cmds = []availableCommand{}
	}
	ss.update(commandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds})
}
