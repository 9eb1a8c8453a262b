package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/ui"

	"github.com/harness-dev/harness/internal/shellquote"
)

// newMCPCommand is `harness mcp`: the MCP servers of the user's and the
// project's configuration, in the style of `claude mcp`.
func newMCPCommand(stdio Stdio) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Configure MCP servers (list, get, add, add-json, remove, reset-project-choices, login, logout)",
		Long: `MCP servers give the model more tools. harness reads them, in Claude Code's mcpServers format,
from ~/.agents/mcp.json (scope user), the project's .mcp.json (scope project, shared through the
repository) and every --mcp-config FILE (the latter win on a name). It also reads the files other
tools keep, each in its own format: Cursor's .cursor/mcp.json, VS Code's .vscode/mcp.json,
opencode.json(c), Codex's .codex/config.toml, crush.json and .crush.json, Gemini's
.gemini/settings.json, in the project and under your home; harness's own files win on a name.
"disabled": true or "enabled": false turns a server off; harness mcp list says where each server
came from, why any is off and which fields it ignores:

  {"mcpServers": {
     "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
     "api":  {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}

${VAR} and ${VAR:-default} are expanded in command, args, env, url and headers.

A stdio server runs inside the sandbox, like a shell command: it writes only the project, reads no
secrets, reaches the network only through the proxy and the net rules (allow net HOST; npx needs
@npm), and is killed with everything it started when the session ends. Its environment is the
sandbox's clean one plus its "env": never your keys unless its configuration names them.

A project's servers run only after you approve them (asked when the session starts; headless:
--approve-mcp); a changed definition asks again. Their tools are mcp__SERVER__TOOL in permission
rules ("allow mcp__fs__read_text_file", "deny mcp__github"); a call asks until a rule allows it.
By default the model gets two tools, mcp_search and mcp_call, instead of every server's schemas
on every request (MCP_TOOLS=eager sends them all). MCP_TIMEOUT bounds a server's start,
MCP_TOOL_TIMEOUT one call (milliseconds, or 30s).

A server's prompts are slash commands, /mcp__SERVER__PROMPT ARGS (words in the order of its
arguments, or NAME=VALUE), in a session and in harness run "/..."; its resources are mentions,
@SERVER:URI, attached to the prompt (the @ menu lists them). /mcp shows every server's state. A
remote server that asks for OAuth: harness mcp login NAME (or /mcp login NAME in a session).
` + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
	}
	cmd.PersistentFlags().StringVar(&project, "project", "", "project directory (default: the git root of the working directory)")
	root := mcpRoot(func(cmd *cobra.Command) (string, string, error) {
		proj, err := projectRoot(cmd.Context(), project)
		if err != nil {
			return "", "", err
		}
		home, err := os.UserHomeDir()
		return proj, home, err
	})

	cmd.AddCommand(newMCPListCommand(stdio, root), newMCPGetCommand(stdio, root), newMCPAddCommand(stdio, root),
		newMCPAddJSONCommand(stdio, root), newMCPRemoveCommand(stdio, root), newMCPResetCommand(stdio, root),
		newMCPLoginCommand(stdio, root), newMCPLogoutCommand(stdio, root))
	return cmd
}

// oauthServer is the streamable HTTP server named name, and the home.
func oauthServer(cmd *cobra.Command, root mcpRoot, name string) (mcp.Server, string, error) {
	proj, home, err := root(cmd)
	if err != nil {
		return mcp.Server{}, "", err
	}
	servers, _, err := mcp.Load(home, proj, nil)
	if err != nil {
		return mcp.Server{}, "", err
	}
	for _, s := range servers {
		if s.Name == name {
			if s.Transport() != "http" {
				return mcp.Server{}, "", fmt.Errorf("MCP server %s is %s: only streamable HTTP servers log in with OAuth", name, s.Transport())
			}
			return s, home, nil
		}
	}
	return mcp.Server{}, "", fmt.Errorf("no MCP server named %s (harness mcp list shows them)", name)
}

// mcpRoot finds the project and the home a harness mcp command works on.
type mcpRoot func(cmd *cobra.Command) (project, home string, err error)

func newMCPListCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	list := &cobra.Command{
		Use:          "list",
		Short:        "List the configured MCP servers",
		Long:         "List the configured MCP servers.\n" + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			servers, warns, err := mcp.Load(home, proj, nil)
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintln(stdio.Err, "harness: "+ui.SanitizeLine(w.Error()))
			}
			if len(servers) == 0 {
				fmt.Fprintf(stdio.Out, "no MCP servers; add one with harness mcp add NAME -- COMMAND [ARGS...]\n")
				return nil
			}
			approvals, err := mcp.LoadApprovals(mcp.ApprovalsFile(home))
			if err != nil {
				return err
			}
			for _, s := range servers {
				fmt.Fprintf(stdio.Out, "%s: %s  (%s%s)\n", ui.SanitizeLine(s.Name), serverSummary(s), s.Scope, approvalNote(approvals, proj, s))
				fmt.Fprintf(stdio.Out, "  from: %s (%s)\n", ui.SanitizeLine(s.File), s.Format.Title())
				if s.Off != "" {
					fmt.Fprintf(stdio.Out, "  off: %s\n", ui.SanitizeLine(s.Off))
				}
				for _, ig := range s.Ignored {
					fmt.Fprintf(stdio.Out, "  ignored: %s\n", ui.SanitizeLine(ig))
				}
			}
			return nil
		},
	}
	return list
}

func newMCPGetCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	get := &cobra.Command{
		Use:          "get NAME",
		Short:        "Show one MCP server's definition",
		Long:         "Show one MCP server's definition.\n" + plainExitHelp,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			servers, _, err := mcp.Load(home, proj, nil)
			if err != nil {
				return err
			}
			approvals, err := mcp.LoadApprovals(mcp.ApprovalsFile(home))
			if err != nil {
				return err
			}
			for _, s := range servers {
				if s.Name != args[0] {
					continue
				}
				out := stdio.Out
				fmt.Fprintf(out, "%s:\n  scope: %s%s\n  file: %s\n  format: %s\n  type: %s\n", ui.SanitizeLine(s.Name), s.Scope, approvalNote(approvals, proj, s), ui.SanitizeLine(s.File), s.Format.Title(), s.Transport())
				if s.Off != "" {
					fmt.Fprintf(out, "  off: %s\n", ui.SanitizeLine(s.Off))
				}
				if s.Transport() == "stdio" {
					fmt.Fprintf(out, "  command: %s\n", ui.SanitizeLine(s.Command))
					if len(s.Args) > 0 {
						fmt.Fprintf(out, "  args: %s\n", quotedWords(s.Args))
					}
					for _, k := range sortedNames(s.Env) {
						fmt.Fprintf(out, "  env: %s=%s\n", ui.SanitizeLine(k), ui.SanitizeLine(s.Env[k]))
					}
					if s.Cwd != "" {
						fmt.Fprintf(out, "  cwd: %s\n", ui.SanitizeLine(s.Cwd))
					}
					for _, k := range s.Forward {
						fmt.Fprintf(out, "  env: %s (passed on from your environment when set)\n", ui.SanitizeLine(k))
					}
				} else {
					fmt.Fprintf(out, "  url: %s\n", ui.SanitizeLine(s.URL))
					for _, k := range sortedNames(s.Headers) {
						fmt.Fprintf(out, "  header: %s: (value not shown)\n", ui.SanitizeLine(k))
					}
				}
				for _, ig := range s.Ignored {
					fmt.Fprintf(out, "  ignored: %s\n", ui.SanitizeLine(ig))
				}
				fmt.Fprintf(out, "  tools in rules: mcp__%s__TOOL (harness mcp remove %s -s %s removes it)\n", ui.SanitizeLine(s.Name), shellquote.Quote(ui.SanitizeLine(s.Name)), s.Scope)
				return nil
			}
			return fmt.Errorf("no MCP server named %s (harness mcp list shows them)", ui.SanitizeLine(args[0]))
		},
	}
	return get
}

func newMCPAddCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	var scope, transport string
	var envs, headers []string
	add := &cobra.Command{
		Use:   "add [-s user|project] [-t stdio|http|sse] [-e KEY=VALUE]... [-H 'KEY: VALUE']... NAME (-- COMMAND [ARGS...] | URL)",
		Short: "Add an MCP server (a stdio command, or an http or sse URL)",
		Long: `Add an MCP server, as claude mcp add does:

  harness mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  harness mcp add -e API_KEY=\${API_KEY} -s project tracker -- node tracker.js
  harness mcp add -t http notion https://mcp.notion.com/mcp -H 'Authorization: Bearer \${NOTION_TOKEN}'

Scope user (the default) writes ~/.agents/mcp.json; project writes the project's .mcp.json.
` + plainExitHelp,
		Args:         cobra.MinimumNArgs(2),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			path, err := scopeFile(scope, home, proj)
			if err != nil {
				return err
			}
			s := mcp.Server{Name: args[0]}
			switch transport {
			case "stdio", "":
				s.Command, s.Args = args[1], args[2:]
				if s.Env, err = keyValues(envs, "="); err != nil {
					return err
				}
				if len(headers) > 0 {
					return errors.New("-H is for http and sse servers; a stdio server takes -e KEY=VALUE")
				}
			case "http", "sse":
				if len(args) != 2 {
					return fmt.Errorf("an %s server takes NAME URL, got %d arguments", transport, len(args))
				}
				s.Type, s.URL = transport, args[1]
				if s.Headers, err = keyValues(headers, ":"); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unknown transport %q: stdio, http or sse", transport)
			}
			if err := mcp.Add(path, s, false); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "Added %s MCP server %s to %s\n", s.Transport(), s.Name, path)
			return nil
		},
	}
	add.Flags().StringVarP(&scope, "scope", "s", "user", "where to save it: user (~/.agents/mcp.json) or project (.mcp.json)")
	add.Flags().StringVarP(&transport, "transport", "t", "stdio", "stdio, http or sse")
	stringArrayVar(add.Flags(), &envs, "env", "e", "an environment variable for a stdio server, KEY=VALUE (repeatable)")
	stringArrayVar(add.Flags(), &headers, "header", "H", "an HTTP header for a remote server, 'KEY: VALUE' (repeatable)")
	return add
}

func newMCPAddJSONCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	var scope string
	addJSON := &cobra.Command{
		Use:          "add-json [-s user|project] NAME JSON",
		Short:        "Add an MCP server from its JSON definition",
		Long:         "Add an MCP server from its JSON definition.\n" + plainExitHelp,
		Args:         cobra.ExactArgs(2),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			path, err := scopeFile(scope, home, proj)
			if err != nil {
				return err
			}
			ss, err := mcp.Parse([]byte(`{"mcpServers":{`+quoteJSON(args[0])+`:`+args[1]+`}}`), "the JSON given", mcp.Scope(scope))
			if err != nil {
				return err
			}
			if err := mcp.Add(path, ss[0], false); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "Added %s MCP server %s to %s\n", ss[0].Transport(), ss[0].Name, path)
			return nil
		},
	}
	addJSON.Flags().StringVarP(&scope, "scope", "s", "user", "where to save it: user or project")
	return addJSON
}

func newMCPRemoveCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	var rmScope string
	remove := &cobra.Command{
		Use:          "remove [-s user|project] NAME",
		Short:        "Remove an MCP server",
		Long:         "Remove an MCP server.\n" + plainExitHelp,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			scopes := []string{"user", "project"}
			if rmScope != "" {
				scopes = []string{rmScope}
			}
			var found []string
			for _, sc := range scopes {
				path, err := scopeFile(sc, home, proj)
				if err != nil {
					return err
				}
				ss, err := mcp.ParseFile(path, mcp.Scope(sc))
				if err != nil {
					return err
				}
				for _, s := range ss {
					if s.Name == args[0] {
						found = append(found, sc)
					}
				}
			}
			switch len(found) {
			case 0:
				return fmt.Errorf("no MCP server named %s in scope %s", args[0], strings.Join(scopes, " or "))
			case 2:
				return fmt.Errorf("MCP server %s is in both the user and the project file: say which with -s user or -s project", args[0])
			}
			path, _ := scopeFile(found[0], home, proj)
			if err := mcp.Remove(path, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "Removed MCP server %s from %s\n", args[0], path)
			return nil
		},
	}
	remove.Flags().StringVarP(&rmScope, "scope", "s", "", "user or project (default: wherever it is)")
	return remove
}

func newMCPResetCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	reset := &cobra.Command{
		Use:          "reset-project-choices",
		Short:        "Forget which of this project's MCP servers you approved",
		Long:         "Forget which of this project's MCP servers you approved.\n" + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, home, err := root(cmd)
			if err != nil {
				return err
			}
			a, err := mcp.LoadApprovals(mcp.ApprovalsFile(home))
			if err != nil {
				return err
			}
			for name := range a.Projects[proj] {
				if err := a.Revoke(proj, name); err != nil {
					return err
				}
			}
			fmt.Fprintf(stdio.Out, "The project's MCP servers will ask again before they run\n")
			return nil
		},
	}
	return reset
}

func newMCPLoginCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	login := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to a remote MCP server with OAuth",
		Long: `Log in to a remote (streamable HTTP) MCP server that asks for OAuth, as the MCP authorization
spec describes: harness finds its authorization server (protected resource metadata), registers
itself there (or uses "oauth": {"clientId": ...} from the server's definition), and prints the URL to
open; your browser comes back to a listener on 127.0.0.1 ("oauth": {"callbackPort": N} fixes its
port). The token is kept in ~/.agents/mcp-auth.json (0600, hidden from every command and server by
the walls) and refreshed when it expires. In a session: /mcp login NAME.
` + plainExitHelp,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			def, home, err := oauthServer(cmd, root, args[0])
			if err != nil {
				return err
			}
			m, errs := mcp.Start(cmd.Context(), []mcp.Server{def}, mcp.Options{
				Getenv:   os.Getenv,
				AuthFile: mcp.AuthFile(home),
				// The user asked for this login: the authorization server
				// the resource names may be reached (and is said).
				CheckNet: func(ctx context.Context, host string, port int) error {
					fmt.Fprintf(stdio.Err, "harness: connecting to %s:%d (the authorization server)\n", ui.SanitizeLine(host), port)
					return nil
				},
				Login: func(server, url string) {
					fmt.Fprintf(stdio.Out, "open this URL to log in to %s:\n  %s\n", ui.SanitizeLine(server), ui.SanitizeLine(url))
					openBrowser(url)
				},
			})
			defer m.Close()
			if len(errs) > 0 {
				return errs[0]
			}
			st := m.Statuses()[0]
			auth := st.Auth
			if auth == "" {
				auth = "not asked for: the server answered without a login"
			}
			fmt.Fprintf(stdio.Out, "%s: connected, %d tools, %d prompts, %d resources; OAuth: %s\n", ui.SanitizeLine(def.Name), st.Tools, st.Prompts, st.Resources, ui.SanitizeLine(auth))
			return nil
		},
	}
	return login
}

func newMCPLogoutCommand(stdio Stdio, root mcpRoot) *cobra.Command {
	logout := &cobra.Command{
		Use:          "logout NAME",
		Short:        "Forget a remote MCP server's stored OAuth login",
		Long:         "Forget a remote MCP server's stored OAuth login.\n" + plainExitHelp,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			def, home, err := oauthServer(cmd, root, args[0])
			if err != nil {
				return err
			}
			if err := mcp.Logout(home, def, os.Getenv); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "%s: logged out\n", ui.SanitizeLine(def.Name))
			return nil
		},
	}
	return logout
}

func approvalNote(a *mcp.Approvals, project string, s mcp.Server) string {
	switch {
	case s.Scope != mcp.ScopeProject || s.Off != "":
		return ""
	case a.Approved(project, s):
		return ", approved"
	case a.Projects[project][s.Name] != "":
		return ", changed since you approved it: asks again"
	}
	return ", not approved yet: asks when a session starts"
}

func scopeFile(scope, home, project string) (string, error) {
	switch scope {
	case "user", "":
		return mcp.UserFile(home), nil
	case "project":
		return mcp.ProjectFile(project), nil
	case "local":
		return "", errors.New("scope local is not supported: use user (~/.agents/mcp.json) or project (.mcp.json)")
	}
	return "", fmt.Errorf("unknown scope %q: user or project", scope)
}

func keyValues(items []string, sep string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, sep)
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY%sVALUE", it, sep)
		}
		if sep == ":" {
			v = strings.TrimSpace(v)
		}
		out[k] = v
	}
	return out, nil
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// serverSummary is Server.Summary for the terminal: a stdio server's words
// quoted as they would be typed, everything sanitised.
func serverSummary(s mcp.Server) string {
	if s.Transport() != "stdio" {
		return ui.SanitizeLine(s.Summary())
	}
	out := quotedWords(append([]string{s.Command}, s.Args...))
	if len(s.Env) > 0 {
		out += " (env: " + ui.SanitizeLine(strings.Join(sortedNames(s.Env), ", ")) + ")"
	}
	if len(s.Forward) > 0 {
		out += " (passed on: " + ui.SanitizeLine(strings.Join(s.Forward, ", ")) + ")"
	}
	if s.Cwd != "" {
		out += " (cwd: " + quotedWords([]string{s.Cwd}) + ")"
	}
	return out
}

// quotedWords shows args as a shell would need them typed, each one
// sanitised: an argument with a space or a control in it cannot pass for
// two, or hide what it holds.
func quotedWords(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = ui.SanitizeLine(a)
		if out[i] == "" || strings.ContainsAny(out[i], " '\"\\$`;&|<>*?()[]{}#~") {
			out[i] = shellquote.Quote(out[i])
		}
	}
	return strings.Join(out, " ")
}
