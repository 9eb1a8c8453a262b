package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/tools"
)

// Prefix begins every MCP tool's name: mcp__SERVER__TOOL, Claude Code's
// convention, so permission rules users already wrote keep their meaning.
const Prefix = "mcp__"

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// ToolName is the name the model and the permission rules know a server's
// tool by; the providers take at most 64 of [A-Za-z0-9_-].
func ToolName(server, tool string) string {
	n := Prefix + server + "__" + unsafeName().ReplaceAllString(tool, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// Tool is one tool a server offers, as harness keeps it: its input
// schema as JSON (the SDK's decoded schema, encoded once when listed, so
// the bytes sent to the model are the same on every request).
type Tool struct {
	Name, Title, Description string
	InputSchema              json.RawMessage
	Annotations              *sdk.ToolAnnotations
}

// toolOf is harness's copy of a listed tool.
func toolOf(t *sdk.Tool) *Tool {
	out := &Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
	if t.InputSchema != nil {
		out.InputSchema, _ = json.Marshal(t.InputSchema)
	}
	return out
}

// entry is one tool of one server, by its full name.
type entry struct {
	name string
	c    *conn
	t    *Tool
}

// entries are every connected server's tools, in server then server order.
func (m *Manager) entries() []entry {
	var out []entry
	for _, c := range m.servers {
		for _, t := range c.toolList() {
			out = append(out, entry{ToolName(c.def.Name, t.Name), c, t})
		}
	}
	return out
}

func (m *Manager) lookup(name string) (entry, bool) {
	for _, e := range m.entries() {
		if e.name == name {
			return e, true
		}
	}
	// A tool the server no longer lists (or never did): its server may
	// still answer, and says so if not.
	for _, c := range m.servers {
		if p := Prefix + c.def.Name + "__"; strings.HasPrefix(name, p) {
			return entry{name: name, c: c, t: &Tool{Name: strings.TrimPrefix(name, p)}}, false
		}
	}
	return entry{}, false
}

// Tools are what the model gets: with lazy, two tools whose definitions
// never change (mcp_search finds tools and gives their schemas, mcp_call
// calls one), so a session's request prefix stays byte-stable however
// many tools the servers offer and whenever one is first used; without,
// one tool per server tool, each with its schema, as listed at start.
func (m *Manager) Tools(lazy bool) []tools.Tool {
	if len(m.servers) == 0 {
		return nil
	}
	var out []tools.Tool
	if lazy {
		out = []tools.Tool{&searchTool{m}, &callTool{m}}
	} else {
		for _, e := range m.entries() {
			out = append(out, &eagerTool{m: m, e: e})
		}
	}
	if m.offersResources() {
		out = append(out, &resourceTool{m})
	}
	for i, t := range out {
		out[i] = noting{t, m}
	}
	return out
}

// noting is an MCP tool whose answer also names the resources that
// changed since they were read (subscribe.go).
type noting struct {
	tools.Tool
	m *Manager
}

func (t noting) Run(ctx context.Context, input json.RawMessage) tools.Result {
	r := t.Tool.Run(ctx, input)
	r.Content += t.m.staleNote()
	return r
}

// eagerTool is one server tool with its own definition.
type eagerTool struct {
	m *Manager
	e entry
}

func (t *eagerTool) Spec() llm.Tool {
	return llm.Tool{Name: t.e.name, Description: describe(t.e), Schema: schemaOf(t.e.t)}
}

func (t *eagerTool) Access(input json.RawMessage) (tools.Access, error) {
	return access(t.e, input), nil
}

func (t *eagerTool) Run(ctx context.Context, input json.RawMessage) tools.Result {
	return t.m.call(ctx, t.e, input)
}

func describe(e entry) string {
	d := strings.TrimSpace(e.t.Description)
	if d == "" {
		d = e.t.Title
	}
	return "(MCP server " + e.c.def.Name + ") " + d
}

// schemaOf is a tool's input schema as the server wrote it, compacted
// (the same bytes every time the list is read).
func schemaOf(t *Tool) json.RawMessage {
	var b bytes.Buffer
	if len(t.InputSchema) == 0 || json.Compact(&b, t.InputSchema) != nil || b.String() == "null" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b.Bytes()
}

// access is what the gate sees: the tool's full name (rules match it), and
// for the prompt the arguments and what the server says of the tool. A
// read-only hint is shown, and trusted for nothing but what plan mode lets
// through (the server then runs under the read-only walls, mode.go): the
// gate decides by name.
func access(e entry, input json.RawMessage) tools.Access {
	what := string(input)
	if len(what) > 300 {
		what = what[:300] + "…"
	}
	ro := e.t.Annotations != nil && e.t.Annotations.ReadOnlyHint
	if ro {
		what += "  (the server says this tool is read-only)"
	}
	return tools.Access{Tool: e.name, Command: what, ReadOnly: ro}
}

// searchTool finds tools by words and returns their schemas.
type searchTool struct{ m *Manager }

func (t *searchTool) Spec() llm.Tool {
	return llm.Tool{
		Name: "mcp_search",
		Description: "Find tools offered by the MCP servers connected to this session (servers: " + strings.Join(t.m.Names(), ", ") +
			"). Returns the best matching tools with their full names and input schemas; call one with mcp_call. An empty query lists every tool by name.",
		Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words to look for in tool names and descriptions, or a tool's full name"},"server":{"type":"string","description":"only this server's tools"}},"required":["query"]}`),
	}
}

func (t *searchTool) Access(input json.RawMessage) (tools.Access, error) {
	var in struct{ Query, Server string }
	if err := json.Unmarshal(input, &in); err != nil {
		return tools.Access{}, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	return tools.Access{Tool: "mcp_search"}, nil
}

func (t *searchTool) Run(ctx context.Context, input json.RawMessage) tools.Result {
	var in struct{ Query, Server string }
	json.Unmarshal(input, &in)
	return tools.Result{Content: t.m.Search(in.Query, in.Server)}
}

// Search is mcp_search's answer: up to 8 tools with schemas, or with an
// empty query every tool by name.
func (m *Manager) Search(query, server string) string {
	var pool []entry
	for _, e := range m.entries() {
		if server == "" || e.c.def.Name == server {
			pool = append(pool, e)
		}
	}
	var b strings.Builder
	for _, st := range m.Statuses() {
		if st.Err != "" && (server == "" || st.Name == server) {
			fmt.Fprintf(&b, "(not available: %s)\n", st.Err)
		}
	}
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		for _, e := range pool {
			fmt.Fprintf(&b, "%s: %s\n", e.name, firstLine(e.t.Description))
		}
		if len(pool) == 0 {
			b.WriteString("no MCP tools\n")
		}
		return m.toldOnce(serversOf(pool)) + b.String()
	}
	type scored struct {
		e entry
		n int
	}
	var hits []scored
	for _, e := range pool {
		if strings.ToLower(e.name) == q {
			hits = []scored{{e, 1 << 20}}
			break
		}
		name, desc := strings.ToLower(e.name), strings.ToLower(e.t.Description)
		n := 0
		for _, w := range strings.FieldsFunc(q, func(r rune) bool { return r == ' ' || r == ',' || r == '_' }) {
			if strings.Contains(name, w) {
				n += 3
			}
			if strings.Contains(desc, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{e, n})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	if len(hits) > 8 {
		hits = hits[:8]
	}
	if len(hits) == 0 {
		fmt.Fprintf(&b, "no MCP tool matches %q; an empty query lists them all\n", query)
		return b.String()
	}
	var shown []entry
	for _, h := range hits {
		shown = append(shown, h.e)
		fmt.Fprintf(&b, "%s\n  %s\n  input schema: %s\n", h.e.name, strings.TrimSpace(describe(h.e)), schemaOf(h.e.t))
		if a := h.e.t.Annotations; a != nil && a.ReadOnlyHint {
			b.WriteString("  read-only (as the server says)\n")
		}
	}
	return m.toldOnce(serversOf(shown)) + b.String()
}

// serversOf is the servers of es, each once, in order.
func serversOf(es []entry) []*conn {
	var out []*conn
	for _, e := range es {
		if !slices.Contains(out, e.c) {
			out = append(out, e.c)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// callTool calls any server tool by its full name.
type callTool struct{ m *Manager }

func (t *callTool) Spec() llm.Tool {
	return llm.Tool{
		Name:        "mcp_call",
		Description: "Call a tool of an MCP server by its full name (mcp__SERVER__TOOL, from mcp_search) with arguments matching its input schema.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the tool's full name, mcp__SERVER__TOOL"},"arguments":{"type":"object","description":"the tool's arguments, matching its input schema"}},"required":["name"]}`),
	}
}

type callInput struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (t *callTool) Access(input json.RawMessage) (tools.Access, error) {
	var in callInput
	if err := json.Unmarshal(input, &in); err != nil {
		return tools.Access{}, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	if !strings.HasPrefix(in.Name, Prefix) {
		return tools.Access{}, fmt.Errorf("name %q is not an MCP tool's full name (mcp__SERVER__TOOL); find it with mcp_search", in.Name)
	}
	e, _ := t.m.lookup(in.Name)
	if e.c == nil {
		return tools.Access{}, fmt.Errorf("no MCP server offers %q; the servers are %s: find tools with mcp_search", in.Name, strings.Join(t.m.Names(), ", "))
	}
	return access(e, argsOf(in.Arguments)), nil
}

func (t *callTool) Run(ctx context.Context, input json.RawMessage) tools.Result {
	var in callInput
	json.Unmarshal(input, &in)
	e, _ := t.m.lookup(in.Name)
	return t.m.call(ctx, e, argsOf(in.Arguments))
}

func argsOf(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// call runs one tool call and turns every way it can fail into a result
// that says what happened: the session goes on.
func (m *Manager) call(ctx context.Context, e entry, args json.RawMessage) tools.Result {
	if err := m.awaitRestart(ctx, e.c); err != nil {
		return tools.Errorf("cancelled while MCP server %s was starting again under the walls of the new mode", e.c.def.Name)
	}
	if e.c.connected() == nil {
		return tools.Errorf("%v. The session goes on without it; use other tools, or tell the user.", e.c.unavailable())
	}
	ro := e.t.Annotations != nil && e.t.Annotations.ReadOnlyHint
	mctx, untrack := m.rs.track(ctx, ro)
	defer untrack()
	if !ro && m.projectReadOnly() {
		// The gate refuses it too; this closes the moment between the
		// gate's word and the call (mode.go).
		return tools.Errorf("not run: the session switched to plan mode, where the project is read-only, and %s does not declare itself read-only (no readOnlyHint); call it again once the user leaves plan mode", e.name)
	}
	cctx, cancel := context.WithTimeout(mctx, m.o.CallTimeout)
	defer cancel()
	params := &sdk.CallToolParams{Name: e.t.Name, Arguments: args}
	if m.o.Log != nil {
		// The newest revision sets the log level per request; older ones
		// once per session (start).
		//lint:ignore SA1019 the newest revision's way to ask a server to log, deprecated with logging itself
		params.Meta = sdk.Meta{sdk.MetaKeyLogLevel: "info"}
	}
	defer m.withProgress(ctx, params)()
	var res *sdk.CallToolResult
	var sess *sdk.ClientSession
	st := e.c.transport() // the stdio server this call goes to, before a restart replaces it
	err := e.c.do(cctx, func(s *sdk.ClientSession) (err error) {
		sess = s
		res, err = s.CallTool(cctx, params)
		return err
	})
	var stopped error
	var rpcErr *jsonrpc.Error
	if err != nil && cctx.Err() == nil && sess != nil && !errors.As(err, &rpcErr) {
		// An error the peer answered (a JSON-RPC error, the server's or
		// one harness gave to its elicitation or sampling) ended nothing.
		stopped = e.c.stoppedWhy(sess) // the session ended under the call: say why
	}
	switch {
	case err == nil:
	case errors.Is(context.Cause(mctx), errModeSwitched) || !ro && st != nil && st.killedForMode():
		// A switch kills the server first and cancels the call after:
		// the call can see the server gone before it sees the cancel.
		return tools.Errorf("MCP server %s: the call of %s was cancelled because the session switched to plan mode while it ran (the project is read-only now, and the server was told to stop); what it did before stays", e.c.def.Name, e.t.Name)
	case ctx.Err() != nil:
		return tools.Errorf("cancelled by the user; the server was told to stop")
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Errorf("MCP server %s did not answer %s within %s; the call was cancelled (MCP_TOOL_TIMEOUT raises the limit)", e.c.def.Name, e.t.Name, m.o.CallTimeout)
	case stopped != nil:
		return tools.Errorf("%v, while answering %s. The session goes on without it.", stopped, e.t.Name)
	default:
		return tools.Errorf("MCP server %s could not run %s: %v", e.c.def.Name, e.t.Name, err)
	}
	text, img := render(res, m.o.Images)
	return tools.Result{Content: text, IsError: res.IsError, Image: img}
}

// render is a call's result for the model: text as is; the first image
// as an image (for a model that takes them, within the providers'
// limits), others and audio described; structured content as JSON when
// there is nothing else.
func render(res *sdk.CallToolResult, images bool) (string, *llm.Image) {
	var parts []string
	var img *llm.Image
	for i, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			if !images {
				parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown: this model does not take images]", c.MIMEType, len(c.Data)))
				break
			}
			if img != nil {
				parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown: one image per result reaches the model]", c.MIMEType, len(c.Data)))
				break
			}
			p, err := llm.PrepareImage(fmt.Sprintf("content %d", i+1), c.Data)
			if fixed := dropBadAncillary(c.Data); err != nil && fixed != nil {
				p, err = llm.PrepareImage(fmt.Sprintf("content %d", i+1), fixed)
			}
			if err != nil {
				parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown: %v]", c.MIMEType, len(c.Data), err))
				break
			}
			img = p
			parts = append(parts, "["+p.Describe()+", shown to you as an image]")
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not given: harness passes no audio to models]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			parts = append(parts, renderResource(c.Resource))
		default:
			raw, _ := json.Marshal(c)
			parts = append(parts, string(raw))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil && string(raw) != "null" {
			parts = append(parts, string(raw))
		}
	}
	if len(parts) == 0 {
		return "(no output)", img
	}
	return strings.Join(parts, "\n"), img
}

func renderResource(r *sdk.ResourceContents) string {
	if r == nil {
		return "[empty resource]"
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return "[resource " + r.URI + "]\n" + r.Text
	}
	if strings.HasPrefix(r.MIMEType, "text/") || r.MIMEType == "application/json" || r.MIMEType == "" && utf8.Valid(r.Blob) {
		return "[resource " + r.URI + "]\n" + string(r.Blob)
	}
	return fmt.Sprintf("[resource %s: %s, %d bytes, not shown; base64 begins %s]", r.URI, r.MIMEType, len(r.Blob), clip(base64.StdEncoding.EncodeToString(r.Blob[:min(len(r.Blob), 12)]), 16))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
