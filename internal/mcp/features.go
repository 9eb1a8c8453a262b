package mcp

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/tools"
)

// Prompt is one server prompt, offered as the slash command
// /mcp__SERVER__PROMPT (Claude Code's name for it).
type Prompt struct {
	Server, Name string
	Command      string // mcp__SERVER__PROMPT, without the slash
	Description  string
	Args         []PromptArg
}

// PromptArg is one argument of a prompt, in the order the server gave.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// Hint is the arguments as a menu or /help shows them: <required> [optional].
func (p Prompt) Hint() string {
	var parts []string
	for _, a := range p.Args {
		if a.Required {
			parts = append(parts, "<"+a.Name+">")
		} else {
			parts = append(parts, "["+a.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}

// Resource is one resource a server lists, mentioned in a prompt as
// @SERVER:URI (Claude Code's form).
type Resource struct {
	Server, URI, Name, Description, MIMEType string
}

// Mention is how a prompt names the resource.
func (r Resource) Mention() string { return "@" + r.Server + ":" + r.URI }

// Prompts are every connected server's prompts, by server then name.
func (m *Manager) Prompts() []Prompt {
	var out []Prompt
	for _, c := range m.servers {
		c.mu.Lock()
		ps := c.prompts
		c.mu.Unlock()
		for _, p := range ps {
			pr := Prompt{Server: c.def.Name, Name: p.Name, Command: ToolName(c.def.Name, p.Name), Description: firstLine(p.Description)}
			if pr.Description == "" {
				pr.Description = p.Title
			}
			for _, a := range p.Arguments {
				if a != nil {
					pr.Args = append(pr.Args, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			out = append(out, pr)
		}
	}
	return out
}

// Resources are every connected server's listed resources (not its
// templates, whose URIs are not known until filled).
func (m *Manager) Resources() []Resource {
	var out []Resource
	for _, c := range m.servers {
		c.mu.Lock()
		rs := c.resources
		c.mu.Unlock()
		for _, r := range rs {
			out = append(out, Resource{Server: c.def.Name, URI: r.URI, Name: r.Name, Description: firstLine(r.Description), MIMEType: r.MIMEType})
		}
	}
	return out
}

// Definition is a configured server's definition.
func (m *Manager) Definition(name string) (Server, bool) {
	if c := m.conn(name); c != nil {
		return c.def, true
	}
	return Server{}, false
}

// Server reports whether name is a configured server.
func (m *Manager) Server(name string) bool {
	return m.conn(name) != nil
}

func (m *Manager) conn(name string) *conn {
	if m == nil {
		return nil
	}
	for _, c := range m.servers {
		if c.def.Name == name {
			return c
		}
	}
	return nil
}

// session is the server's live session, or why there is none.
func (m *Manager) session(server string) (*sdk.ClientSession, *conn, error) {
	c := m.conn(server)
	if c == nil {
		return nil, nil, fmt.Errorf("no MCP server is named %q (the servers: %s)", server, strings.Join(m.Names(), ", "))
	}
	s := c.connected()
	if s == nil {
		return nil, c, c.unavailable()
	}
	return s, c, nil
}

// PromptByCommand finds a prompt by its command name (mcp__SERVER__PROMPT).
func (m *Manager) PromptByCommand(command string) (Prompt, bool) {
	for _, p := range m.Prompts() {
		if p.Command == command {
			return p, true
		}
	}
	return Prompt{}, false
}

// GetPrompt asks the server for the prompt filled with args, as typed
// after the command: words in the order of the prompt's arguments (quotes
// keep spaces in one), or NAME=VALUE for one by name. The answer's
// messages become the text of the turn.
func (m *Manager) GetPrompt(ctx context.Context, p Prompt, args string) (string, error) {
	_, c, err := m.session(p.Server)
	if err != nil {
		return "", err
	}
	vals, err := bindArgs(p, splitWords(args))
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, m.o.StartTimeout)
	defer cancel()
	var res *sdk.GetPromptResult
	err = c.do(cctx, func(s *sdk.ClientSession) (err error) {
		res, err = s.GetPrompt(cctx, &sdk.GetPromptParams{Name: p.Name, Arguments: vals})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("MCP server %s, prompt %s: %w", p.Server, p.Name, err)
	}
	return renderPrompt(res), nil
}

// bindArgs maps the words typed to the prompt's arguments, every
// required one given.
func bindArgs(p Prompt, words []string) (map[string]string, error) {
	vals, err := bindWords(p, words)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, a := range p.Args {
		if a.Required && vals[a.Name] == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("/%s needs %s: /%s %s", p.Command, strings.Join(missing, ", "), p.Command, p.Hint())
	}
	return vals, nil
}

// bindWords maps the words typed so far to the prompt's arguments.
func bindWords(p Prompt, words []string) (map[string]string, error) {
	vals := map[string]string{}
	known := map[string]bool{}
	for _, a := range p.Args {
		known[a.Name] = true
	}
	var pos []string
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && known[k] {
			vals[k] = v
			continue
		}
		pos = append(pos, w)
	}
	i := 0
	for _, a := range p.Args {
		if _, set := vals[a.Name]; set {
			continue
		}
		if i < len(pos) {
			vals[a.Name] = pos[i]
			i++
		}
	}
	if i < len(pos) {
		// More words than arguments: the rest belong to the last one, as
		// a sentence typed after a one-argument prompt would.
		if len(p.Args) == 0 {
			return nil, fmt.Errorf("/%s takes no arguments", p.Command)
		}
		last := p.Args[len(p.Args)-1].Name
		vals[last] = strings.Join(append([]string{vals[last]}, pos[i:]...), " ")
	}
	return vals, nil
}

// splitWords splits on blanks, keeping "double" or 'single' quoted words
// whole (without their quotes).
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"' || ch == '\'':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// renderPrompt is a prompt's messages as one text: a lone user message as
// it is; several with their roles.
func renderPrompt(res *sdk.GetPromptResult) string {
	var parts []string
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		text, _ := render(&sdk.CallToolResult{Content: []sdk.Content{msg.Content}}, false)
		if len(res.Messages) > 1 {
			text = "[" + string(msg.Role) + "]\n" + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}

// ReadResource reads one resource of a server, as text for the model
// (binary content described, not inlined).
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	res, err := m.readResource(ctx, server, uri)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, rc := range res.Contents {
		if rc != nil {
			parts = append(parts, strings.TrimPrefix(renderResource(rc), "[resource "+rc.URI+"]\n"))
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("MCP server %s, resource %s: empty", server, uri)
	}
	return strings.Join(parts, "\n"), nil
}

func (m *Manager) readResource(ctx context.Context, server, uri string) (*sdk.ReadResourceResult, error) {
	_, c, err := m.session(server)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, m.o.StartTimeout)
	defer cancel()
	var res *sdk.ReadResourceResult
	err = c.do(cctx, func(s *sdk.ClientSession) (err error) {
		res, err = s.ReadResource(cctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("MCP server %s, resource %s: %w", server, uri, err)
	}
	m.subscribe(c, uri)
	return res, nil
}

// listPrompts and listResources refresh what a server offers; a server
// without the capability offers none.
func (c *conn) listPrompts(ctx context.Context) error {
	s := c.connected()
	if s == nil {
		return c.unavailable()
	}
	if c.caps().Prompts == nil {
		return nil
	}
	var ps []*sdk.Prompt
	for p, err := range s.Prompts(ctx, nil) {
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	c.mu.Lock()
	c.prompts = ps
	c.mu.Unlock()
	return nil
}

func (c *conn) listResources(ctx context.Context) error {
	s := c.connected()
	if s == nil {
		return c.unavailable()
	}
	if c.caps().Resources == nil {
		return nil
	}
	var rs []*sdk.Resource
	for r, err := range s.Resources(ctx, nil) {
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	// Templates (resources/templates/list) are listed for the model,
	// which reads one by filling its URI in; a server that answers the
	// list with an error has none.
	var ts []*sdk.ResourceTemplate
	for t, err := range s.ResourceTemplates(ctx, nil) {
		if err != nil {
			ts = nil
			break
		}
		ts = append(ts, t)
	}
	c.mu.Lock()
	c.resources, c.templates = rs, ts
	c.mu.Unlock()
	return nil
}

// changed refreshes one list of a server that sent a list_changed
// notification and tells the user.
func (m *Manager) changed(c *conn, what string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), m.o.StartTimeout)
		defer cancel()
		var err error
		var n func() int
		switch what {
		case "tools":
			err, n = c.listTools(ctx), func() int { return len(c.toolList()) }
		case "prompts":
			err, n = c.listPrompts(ctx), func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.prompts) }
		case "resources":
			err, n = c.listResources(ctx), func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.resources) }
		}
		c.mu.Lock()
		c.changes[what]++
		c.mu.Unlock()
		if m.o.Notify == nil {
			return
		}
		if err != nil {
			m.o.Notify(fmt.Sprintf("MCP server %s changed its %s, and listing them failed: %v", c.def.Name, what, err))
			return
		}
		text := fmt.Sprintf("MCP server %s changed its %s (now %d)", c.def.Name, what, n())
		if what == "tools" {
			text += "; mcp_search finds the new ones"
		}
		m.o.Notify(text)
	}()
}

// Changes counts the list_changed notifications a server's lists were
// refreshed on (for tests and /mcp).
func (m *Manager) Changes(server, what string) int {
	c := m.conn(server)
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes[what]
}

// progressSeq makes each call's progress token unique in the process.
var progressSeq atomic.Int64

// withProgress gives a call a progress token when the caller shows
// progress (tools.Progress), and returns the function to stop listening.
func (m *Manager) withProgress(ctx context.Context, params *sdk.CallToolParams) func() {
	show := tools.Progress(ctx)
	if show == nil {
		return func() {}
	}
	token := "harness-" + strconv.FormatInt(progressSeq.Add(1), 10)
	params.SetProgressToken(token)
	m.pmu.Lock()
	if m.progress == nil {
		m.progress = map[string]func(string){}
	}
	m.progress[token] = show
	m.pmu.Unlock()
	return func() {
		m.pmu.Lock()
		delete(m.progress, token)
		m.pmu.Unlock()
	}
}

// onProgress shows a notifications/progress of a call in flight as a line
// of its live output: "progress 3/5 (60%) message".
func (m *Manager) onProgress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return // not one of harness's
	}
	m.pmu.Lock()
	show := m.progress[token]
	m.pmu.Unlock()
	if show == nil {
		return
	}
	show(progressLine(p) + "\n")
}

func progressLine(p *sdk.ProgressNotificationParams) string {
	line := "progress " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		line += fmt.Sprintf("/%s (%d%%)", strconv.FormatFloat(p.Total, 'f', -1, 64), int(100*p.Progress/p.Total))
	}
	if p.Message != "" {
		line += " " + p.Message
	}
	return line
}
