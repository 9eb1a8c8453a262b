package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/tools"
)

// resourceTool lets the model list the servers' resources and read one.
// Its definition never changes (the request prefix stays byte-stable);
// the session offers it when a server it started with offers resources.
type resourceTool struct{ m *Manager }

// ResourceToolName is the model's tool that reads MCP resources.
const ResourceToolName = "mcp_read_resource"

func (t *resourceTool) Spec() llm.Tool {
	return llm.Tool{
		Name: ResourceToolName,
		Description: "Read a resource an MCP server offers (a file, a record, a document), by its server and URI. " +
			"Without uri, lists the resources the servers offer (of one server when server is given), with their URIs, " +
			"and their URI templates (RFC 6570): read one by giving its URI with the variables filled in.",
		Schema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"the MCP server's name"},"uri":{"type":"string","description":"the resource's URI, as listed"}}}`),
	}
}

type resourceInput struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// Access: listing asks nothing (harness answers from the lists it
// holds); a read is a request to the server, decided like its tools by
// the rules that name the server (mcp__SERVER), as
// mcp__SERVER__@resource, a name no tool can have.
func (t *resourceTool) Access(input json.RawMessage) (tools.Access, error) {
	var in resourceInput
	if err := json.Unmarshal(input, &in); err != nil {
		return tools.Access{}, fmt.Errorf("arguments must be a JSON object: %w", err)
	}
	if in.URI == "" {
		return tools.Access{Tool: ResourceToolName, ReadOnly: true}, nil
	}
	if in.Server == "" || !t.m.Server(in.Server) {
		return tools.Access{}, fmt.Errorf("server must name an MCP server (the servers: %s)", strings.Join(t.m.Names(), ", "))
	}
	return tools.Access{Tool: Prefix + in.Server + "__@resource", Command: "read " + in.URI, ReadOnly: true}, nil
}

func (t *resourceTool) Run(ctx context.Context, input json.RawMessage) tools.Result {
	var in resourceInput
	json.Unmarshal(input, &in)
	if in.URI == "" {
		return tools.Result{Content: t.m.listing(in.Server)}
	}
	if err := t.m.awaitRestart(ctx, t.m.conn(in.Server)); err != nil {
		return tools.Errorf("cancelled while MCP server %s was starting again", in.Server)
	}
	res, err := t.m.readResource(ctx, in.Server, in.URI)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	var parts []string
	for _, rc := range res.Contents {
		if rc != nil {
			parts = append(parts, renderResource(rc))
		}
	}
	if len(parts) == 0 {
		return tools.Errorf("MCP server %s, resource %s: empty", in.Server, in.URI)
	}
	return tools.Result{Content: strings.Join(parts, "\n")}
}

// listing is the resources of one server (or all), a line each.
func (m *Manager) listing(server string) string {
	var b strings.Builder
	for _, r := range m.Resources() {
		if server != "" && r.Server != server {
			continue
		}
		fmt.Fprintf(&b, "server %s  uri %s  %s", r.Server, r.URI, r.Name)
		if r.MIMEType != "" {
			b.WriteString(" (" + r.MIMEType + ")")
		}
		if r.Description != "" {
			b.WriteString(": " + r.Description)
		}
		b.WriteByte('\n')
	}
	for _, c := range m.servers {
		if server != "" && c.def.Name != server {
			continue
		}
		c.mu.Lock()
		ts := c.templates
		c.mu.Unlock()
		for _, t := range ts {
			if t == nil {
				continue
			}
			fmt.Fprintf(&b, "server %s  template %s  %s", c.def.Name, t.URITemplate, t.Name)
			if t.MIMEType != "" {
				b.WriteString(" (" + t.MIMEType + ")")
			}
			if d := firstLine(t.Description); d != "" {
				b.WriteString(": " + d)
			}
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return "no MCP resources listed"
	}
	return b.String()
}

// offersResources reports whether a server the session started with
// offers resources.
func (m *Manager) offersResources() bool {
	for _, c := range m.servers {
		if c.caps().Resources != nil {
			return true
		}
	}
	return false
}
