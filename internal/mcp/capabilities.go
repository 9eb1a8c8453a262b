//lint:file-ignore SA1019 roots and logging are deprecated in the newest revision (SEP-2577) and still what servers of 2025-11-25, the reference servers among them, use; the brief asks for both

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newClient is the SDK client of one server's connection: the
// capabilities harness implements, declared and nothing more (roots when
// the session has a project, elicitation and sampling when the session
// answers them), and the server's notifications routed to harness's
// handlers. The SDK asks for its newest protocol revision and
// falls back to the server's.
func (m *Manager) newClient(c *conn) *sdk.Client {
	roots := m.roots()
	caps := &sdk.ClientCapabilities{} // not nil: the SDK's default would declare roots with listChanged
	if len(roots) > 0 {
		// The roots are fixed for the session (the project and --add-dir
		// are decided at its start), so no list_changed is promised.
		caps.RootsV2 = &sdk.RootCapabilities{}
	}
	opts := &sdk.ClientOptions{
		Capabilities:               caps,
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { m.changed(c, "tools") },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { m.changed(c, "prompts") },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { m.changed(c, "resources") },
		ResourceUpdatedHandler:     func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { m.onUpdated(c, r.Params) },
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			m.onLog(c, r.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			m.onProgress(r.Params)
		},
	}
	if m.o.Elicit != nil {
		// The SDK declares form mode (at 2025-11-25; {} before), not URL
		// mode: harness opens no browser for a server.
		opts.ElicitationHandler = func(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return m.elicit(ctx, c, r)
		}
	}
	if m.o.Sample != nil {
		// The handler that sees a request's tools, so one that brings
		// them is refused with a clear error (the basic handler's SDK
		// conversion drops them); declared without sampling.tools.
		caps.Sampling = &sdk.SamplingCapabilities{}
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, r *sdk.CreateMessageWithToolsRequest) (*sdk.CreateMessageWithToolsResult, error) {
			return m.sample(ctx, c, r)
		}
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "harness", Version: "1"}, opts)
	cl.AddRoots(roots...)
	return cl
}

// roots are the directories a server may work in: the writable roots of
// the session's walls (the project first, then every --add-dir), as the
// sandbox's policy holds them. A server that asks (roots/list) gets them,
// so the reference filesystem server started without directories works
// on the project.
func (m *Manager) roots() []*sdk.Root {
	if m.o.Sandbox == nil || m.o.Sandbox.Policy() == nil {
		return nil
	}
	var out []*sdk.Root
	for _, w := range m.o.Sandbox.Policy().Writable() {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(w)}
		if !strings.HasPrefix(u.Path, "/") {
			u.Path = "/" + u.Path // a Windows drive: file:///C:/…
		}
		out = append(out, &sdk.Root{URI: u.String(), Name: filepath.Base(w)})
	}
	return out
}

// onLog keeps a server's log message (notifications/message) in the
// session's log.
func (m *Manager) onLog(c *conn, p *sdk.LoggingMessageParams) {
	if p == nil || m.o.Log == nil {
		return
	}
	var text string
	switch d := p.Data.(type) {
	case string:
		text = d
	default:
		raw, _ := json.Marshal(d)
		text = string(raw)
	}
	if p.Logger != "" {
		text = p.Logger + ": " + text
	}
	if len(text) > 4096 {
		text = text[:4096] + "…"
	}
	m.o.Log(c.def.Name, string(p.Level), text)
}

// Budgets of the servers' instructions in the system prompt: each
// server's up to InstructionsPerServer bytes, all of them up to
// InstructionsTotal; what is over is cut, and the cut says so.
const (
	InstructionsPerServer = 2048
	InstructionsTotal     = 8192
)

// Instructions are the connected servers' instructions (the
// InitializeResult's), by server name, each within its budget, for the
// system prompt; "" when no server gave any. The session reads them once
// at its start, so the prompt stays byte-stable for the cache. A server
// not connected yet then (started beside the session) has its
// instructions told with the first mcp_search answer that names it
// (toldOnce); each server's are told once.
func (m *Manager) Instructions() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range m.servers {
		part := c.instructions(true)
		if part == "" {
			continue
		}
		if b.Len()+len(part) > InstructionsTotal {
			fmt.Fprintf(&b, "[the instructions of %s and any later servers are left out: all servers' instructions are kept within %d bytes]\n", c.def.Name, InstructionsTotal)
			break
		}
		b.WriteString(part)
	}
	return b.String()
}

// instructions is the server's instructions within their budget, headed
// by its name, and marks them told; "" when it gave none or they were
// told already (untold: whatever was told).
func (c *conn) instructions(evenIfTold bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.init == nil || (c.told && !evenIfTold) {
		return ""
	}
	text := strings.TrimSpace(c.init.Instructions)
	if text == "" {
		return ""
	}
	c.told = true
	if len(text) > InstructionsPerServer {
		text = cutUTF8(text, InstructionsPerServer) + fmt.Sprintf("\n[cut: the server's instructions are %d bytes; harness keeps %d]", len(text), InstructionsPerServer)
	}
	return "## " + c.def.Name + "\n" + text + "\n"
}

// toldOnce is the instructions of the servers named, not yet told, for
// an mcp_search answer.
func (m *Manager) toldOnce(servers []*conn) string {
	var b strings.Builder
	for _, c := range servers {
		if part := c.instructions(false); part != "" {
			b.WriteString(part)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "Instructions from the MCP server(s), told once:\n" + b.String() + "\n"
}

// cutUTF8 is s cut to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
