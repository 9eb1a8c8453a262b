package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/sessionlog"

	"github.com/harness-dev/harness/internal/shellquote"
)

// startMCP starts the MCP servers of every file mcp.Sources names (the
// user's and the project's, harness's own and other tools') and
// --mcp-config, each stdio server inside the session's sandbox, in its
// cwd when the walls let commands read it; a server its file turns off
// is not started. A project's server runs only once the user approved its
// definition as it is now (asked here, or --approve-mcp); one that is not
// approved, or fails to start, is a warning and the session goes on.
func (b *builder) startMCP(ctx context.Context) error {
	s, home, project := b.s, b.o.Source.Home, b.policy().Project()
	// Started in plan mode, the servers start under the read-only walls
	// (loadExtensions sets the mode itself, after them).
	if m, err := extend.ParseMode(b.o.PermissionMode); err == nil && m == extend.ModePlan {
		b.live.SetProjectReadOnly(true)
	}
	read := settingsReader(b.live)
	defs, warns, err := mcp.LoadWith(home, project, b.o.MCPConfigs, func(path string) ([]byte, bool, error) {
		data, _, reach, err := read.ReadFile(path, 4<<20)
		return data, reach, err
	})
	if err != nil {
		return err
	}
	for _, w := range warns {
		s.Warnings = append(s.Warnings, notice.Warning(notice.MCP, w.Error()))
	}
	run, err := b.serversToRun(ctx, defs, read)
	if err != nil {
		return err
	}
	o := b.mcpOptions()
	if b.o.MCPInBackground && len(run) > 0 {
		// Beside the prompt: a slow server holds up nothing but its own
		// tools. What the first request sends about them is settled just
		// before it (lateMCP).
		m := b.beginMCP(ctx, run, o)
		s.MCP = m
		s.cleanup = append(s.cleanup, m.Close, s.mcpStarts.stop) // stop first: cleanup runs newest first
		b.late = &lateMCP{b: b, eager: !mcpLazy(b.o.Source.Env)}
		return nil
	}
	m, errs := mcp.Start(ctx, run, o)
	for _, e := range errs {
		s.Warnings = append(s.Warnings, notice.Warning(notice.MCP, e.Error()+"; the session goes on without it"))
	}
	s.MCP = m
	s.cleanup = append(s.cleanup, m.Close) // before the sandbox closes: cleanup runs newest first
	return nil
}

// serversToRun is which of defs start: not those their file turns off,
// whose cwd the walls refuse, or that are not approved (a project stdio
// server is approved with the content of the files it runs); each left
// out is said.
func (b *builder) serversToRun(ctx context.Context, defs []mcp.Server, read extend.Reader) ([]mcp.Server, error) {
	s, home, project := b.s, b.o.Source.Home, b.policy().Project()
	if len(defs) == 0 {
		return nil, nil
	}
	approvals, err := mcpApprovals(b.policy(), home)
	if approvals == nil {
		return nil, err
	}
	if err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.MCP, err.Error()))
	}
	env := environ(b.o.Source.Env)
	notStarted := func(d mcp.Server, why string) {
		s.Warnings = append(s.Warnings, notice.Warning(notice.MCP, fmt.Sprintf("MCP server %s (%s) not started: %s", d.Name, d.File, why)))
	}
	var run []mcp.Server
	for _, d := range defs {
		if d.Off != "" {
			// A server its file turns off is listed by harness mcp
			// list, not repeated at every start.
			if !d.Disabled {
				notStarted(d, d.Off)
			}
			continue
		}
		if why := mcpCwdRefused(b.policy(), d, b.o.Source.Env); why != "" {
			notStarted(d, why)
			continue
		}
		if d.Scope == mcp.ScopeProject && d.Transport() == "stdio" {
			// Approved with the content of the files it runs.
			words := append([]string{d.Command}, d.Args...)
			for i, w := range words {
				words[i] = shellquote.Quote(w)
			}
			d.Pin = extend.Digest(read.Pins(strings.Join(words, " "), project, env))
		}
		if ok, why := b.approveMCP(ctx, approvals, project, d); ok {
			run = append(run, d)
		} else {
			notStarted(d, why)
		}
	}
	return run, nil
}

// mcpOptions are the session's terms for its MCP servers: its sandbox,
// the model's image support, its log, net rules, questions and sampling.
func (b *builder) mcpOptions() mcp.Options {
	s, home := b.s, b.o.Source.Home
	// A model that takes images gets a tool result's image as one.
	model, _ := llm.LookupModel(s.Config.Model)
	return mcp.Options{
		Sandbox: s.Sandbox,
		Images:  model.Images,
		Log: func(server, level, text string) {
			// Kept in the session's log (harness sessions show it), not
			// shown: servers log often.
			s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: "MCP server " + server + " logged (" + level + "): " + text})
		},
		Getenv:       func(k string) string { return b.o.Source.Env[k] },
		AuthFile:     mcp.AuthFile(home),
		StartTimeout: envDuration(b.o.Source.Env, "MCP_TIMEOUT"),
		CallTimeout:  envDuration(b.o.Source.Env, "MCP_TOOL_TIMEOUT"),
		CheckNet: func(ctx context.Context, host string, port int) error {
			v := s.Gate.CheckNet(ctx, permission.NetRequest{Host: host, Port: port, Command: "an MCP server's HTTP client"})
			if !v.Allowed {
				return fmt.Errorf("connection to %s:%d refused: %s", host, port, v.Reason)
			}
			return nil
		},
		// Both declared to every server: a question is asked or declined,
		// a sampling request approved (or allowed by a rule) or refused.
		Elicit: s.mcpElicit(b.o.Elicit),
		Sample: s.mcpSample,
		Notify: func(text string) {
			n := notice.Warning(notice.MCP, text)
			err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: text})
			s.tell(n)
			if err != nil {
				s.tell(logFailed("could not record that notice", err))
			}
		},
	}
}

// mcpApprovals reads the user's MCP approvals, which must lie out of the
// commands' reach: a file that resolves into the project approves nothing
// (an empty set, with the error saying so).
func mcpApprovals(pol *walls.Policy, home string) (*mcp.Approvals, error) {
	path := mcp.ApprovalsFile(home)
	if pol.Reachable(path) {
		return &mcp.Approvals{Projects: map[string]map[string]string{}},
			fmt.Errorf("MCP approvals: %s resolves where commands can write it, so its approvals are ignored; make it a regular file outside the project", path)
	}
	a, err := mcp.LoadApprovals(path)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// mcpCwdRefused says why a stdio server's working directory may not be
// used ("" when it may): the walls decide, as for any command's, so a cwd
// in a secret path is refused before anything starts.
func mcpCwdRefused(pol *walls.Policy, d mcp.Server, env map[string]string) string {
	if d.Cwd == "" || d.Transport() != "stdio" {
		return ""
	}
	e, err := d.Expand(func(k string) string { return env[k] })
	if err != nil {
		return "" // said when it starts
	}
	if err := pol.CheckRead(e.Cwd); err != nil {
		return "its cwd " + e.Cwd + " is refused by the walls: " + err.Error()
	}
	return ""
}

// approveMCP decides whether d may run: servers of the user's own files
// and flags may; a project's only with an approval of its definition as
// it is now, --approve-mcp, or the user's yes when there is someone to ask.
func (b *builder) approveMCP(ctx context.Context, a *mcp.Approvals, project string, d mcp.Server) (bool, string) {
	if a.Approved(project, d) {
		return true, ""
	}
	if b.o.ApproveMCP {
		return true, ""
	}
	changed := ""
	if _, ok := a.Projects[project][d.Name]; ok {
		changed = " (its definition changed since you approved it)"
	}
	if b.o.Prompter == nil {
		return false, "a project's servers run only once you approve them" + changed + "; start harness interactively to be asked, or pass --approve-mcp"
	}
	req := permission.Request{Tool: "mcp_server", Command: d.Name + ": " + d.Summary() + "  (from " + d.File + "; it runs inside the sandbox)"}
	dec := permission.Decision{Verdict: permission.Ask, Rule: "a project's MCP server runs only once you approve it" + changed}
	ans, err := b.o.Prompter.Prompt(ctx, req, dec, d.Name)
	if err != nil {
		return false, "the approval prompt failed: " + err.Error()
	}
	switch ans.Choice {
	case permission.Yes, permission.Session:
		return true, ""
	case permission.Always:
		if err := a.Approve(project, d); err != nil {
			b.s.Warnings = append(b.s.Warnings, notice.Warning(notice.MCP, "MCP server "+d.Name+" approved for this session only: "+err.Error()))
		}
		return true, ""
	}
	return false, "you did not approve it"
}

// mcpCommands are the MCP servers' prompts as custom commands,
// /mcp__SERVER__PROMPT (Claude Code's names), listed anew whenever asked:
// a server's prompts/list_changed shows in the menu and /help at once.
func mcpCommands(m *mcp.Manager) func() []extend.Command {
	return func() []extend.Command {
		if m == nil {
			return nil
		}
		var out []extend.Command
		for _, p := range m.Prompts() {
			out = append(out, extend.Command{
				Name: p.Command, Description: p.Description, ArgumentHint: p.Hint(),
				Scope: "mcp", Path: "server " + p.Server,
				Fetch: func(ctx context.Context, args string) (string, error) { return m.GetPrompt(ctx, p, args) },
			})
		}
		return out
	}
}

// mcpLazy says whether MCP tools load lazily (MCP_TOOLS=lazy, the
// default) or each with its schema on every request (MCP_TOOLS=eager).
func mcpLazy(env map[string]string) bool { return env["MCP_TOOLS"] != "eager" }

// envDuration reads a duration in milliseconds (as Claude Code's
// MCP_TIMEOUT) or Go's form ("30s"); 0 when unset or unreadable.
func envDuration(env map[string]string, key string) time.Duration {
	v := env[key]
	if ms, err := strconv.Atoi(v); err == nil {
		return time.Duration(ms) * time.Millisecond
	}
	d, _ := time.ParseDuration(v)
	return d
}
