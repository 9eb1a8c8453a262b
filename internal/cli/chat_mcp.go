package cli

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/ui"
)

// mcpReport is /mcp's list: every server, its state, what it offers, and
// how a remote one is authorized.
func mcpReport(m *mcp.Manager, starting []string, st ui.Style) string {
	sts := m.Statuses()
	if len(sts) == 0 {
		return st.Dim("no MCP servers: add one with harness mcp add NAME -- COMMAND [ARGS...], or a project's .mcp.json")
	}
	var b strings.Builder
	b.WriteString(st.Bold(fmt.Sprintf("MCP servers (%d)", len(sts))) + "\n")
	for _, s := range sts {
		state := st.Green("connected")
		switch {
		case slices.Contains(starting, s.Name):
			state = st.Yellow("starting…")
		case s.Err != "" && s.Auth == "needs login":
			state = st.Yellow("needs login")
		case s.Err != "":
			state = st.Red("failed")
		}
		fmt.Fprintf(&b, "  %s  %s · %s · %d tools · %d prompts · %d resources", st.Bold(s.Name), state, s.Transport, s.Tools, s.Prompts, s.Resources)
		if s.Auth != "" {
			fmt.Fprintf(&b, " · OAuth: %s", s.Auth)
		}
		fmt.Fprintf(&b, "  %s\n", st.Dim("("+s.Scope+": "+ui.Sanitize(s.Summary)+")"))
		if s.Err != "" {
			fmt.Fprintf(&b, "    %s\n", ui.Sanitize(s.Err))
		}
	}
	b.WriteString(st.Dim("  prompts are commands (/mcp__SERVER__PROMPT args); resources are mentions (@SERVER:URI, Tab or the @ menu); /mcp login NAME logs in to a remote server"))
	return b.String()
}

// mcpCommand is /mcp [login NAME | logout NAME].
func (c *chat) mcpCommand(ctx context.Context, arg string) error {
	st := c.t.Style
	verb, name, _ := strings.Cut(arg, " ")
	name = strings.TrimSpace(name)
	switch verb {
	case "":
		c.r.Print(mcpReport(c.s.MCP, c.s.MCPStarting(), st))
		return nil
	case "login":
		if name == "" {
			return usageError("/mcp login NAME")
		}
		var err error
		interrupted, _ := c.withTurn(ctx, func(ctx context.Context) error {
			err = c.s.MCP.Login(ctx, name, func(server, url string) {
				c.r.Print(st.Yellow("log in to MCP server "+server+" in your browser (Esc cancels):") + "\n  " + url)
				openBrowser(url)
			})
			return err
		})
		if interrupted {
			c.r.Print(st.Dim("login cancelled"))
			return nil
		}
		if err != nil {
			return err
		}
		c.r.Print(st.Green("logged in to "+name) + st.Dim(" (the token is kept in ~/.agents/mcp-auth.json, which the walls hide)"))
		c.r.Print(mcpReport(c.s.MCP, c.s.MCPStarting(), st))
		return nil
	case "logout":
		def, ok := c.s.MCP.Definition(name)
		if !ok {
			return fmt.Errorf("no MCP server named %q", name)
		}
		if err := mcp.Logout(c.s.Home, def, func(k string) string { return os.Getenv(k) }); err != nil {
			return err
		}
		c.r.Print(st.Dim("forgot the stored login of " + name + "; this session's connection keeps its token until harness exits"))
		return nil
	}
	return usageError("/mcp, /mcp login NAME or /mcp logout NAME")
}

// openBrowser opens url in the user's browser where there is one to open
// (a desktop session, or macOS); the URL is printed either way. Only an
// http(s) URL is opened: the URL comes from a server's metadata, and the
// opener would run a file: or custom-scheme URL's handler on the host.
func openBrowser(url string) {
	var cmd *exec.Cmd
	switch {
	case os.Getenv("HARNESS_NO_BROWSER") != "":
		return
	case !webURL(url):
		return
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", url)
	case runtime.GOOS == "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	case os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "":
		cmd = exec.Command("xdg-open", url)
	default:
		return
	}
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// mcpMentions are the MCP resources as the @ menu offers them
// (SERVER:URI, without the @).
func mcpMentions(m *mcp.Manager) []string {
	var out []string
	for _, r := range m.Resources() {
		out = append(out, strings.TrimPrefix(r.Mention(), "@"))
	}
	return out
}

// isResourceMention reports whether a mention names an MCP resource:
// @SERVER:URI of a configured server.
func isResourceMention(m *mcp.Manager, name string) bool {
	server, uri, ok := strings.Cut(name, ":")
	return ok && uri != "" && m.Server(server)
}

// attachResources reads the MCP resources a prompt mentions (@SERVER:URI,
// Claude Code's form) and appends each in a <resource> block, so the
// model has it without a tool call; notes say what was attached or why
// not.
func attachResources(ctx context.Context, prompt string, m *mcp.Manager) (string, []string) {
	var b strings.Builder
	var notes []string
	seen := map[string]bool{}
	for _, mt := range mentions(prompt) {
		name := strings.TrimRight(mt.name, ".,;!?)")
		if mt.bare || seen[name] || !isResourceMention(m, name) {
			continue
		}
		seen[name] = true
		server, uri, _ := strings.Cut(name, ":")
		text, err := m.ReadResource(ctx, server, uri)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s: %v: not attached", name, err))
			continue
		}
		if len(text) > mentionLimit {
			notes = append(notes, fmt.Sprintf("@%s is %d KB, over %d KB: not attached", name, len(text)>>10, mentionLimit>>10))
			continue
		}
		fmt.Fprintf(&b, "\n\n<resource server=%q uri=%q>\n%s", server, uri, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("</resource>")
		notes = append(notes, fmt.Sprintf("attached %s from MCP server %s (%d lines)", uri, server, strings.Count(text, "\n")+1))
	}
	return prompt + b.String(), notes
}

// withMCPMentions adds the MCP resources to the @ menu's files.
func withMCPMentions(c *chat, files func() []string) func() []string {
	return func() []string {
		return append(mcpMentions(c.s.MCP), files()...)
	}
}

// webURL reports an absolute http or https URL.
func webURL(s string) bool {
	u, err := neturl.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
