package cli

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// globalOptions are the flags every agent-running command shares.
type globalOptions struct {
	Project   string
	Model     string
	Provider  string
	BaseURL   string
	Backend   string
	AddDirs   []string
	Continue  bool
	Resume    string
	MaxSteps  int
	Allow     []string
	AllowNet  []string
	Deny      []string
	Yolo      bool
	Timeout   time.Duration
	MaxTokens int
	Thinking  string
	Effort    string
	// Extensions (package extend).
	PermissionMode    string
	Settings          []string
	AllowProjectHooks bool
	// MCPConfigs are --mcp-config files; ApproveMCP runs the project's
	// MCP servers without asking (--approve-mcp).
	MCPConfigs []string
	ApproveMCP bool
}

// register adds the agent flags to a command that runs the agent (the
// interactive root and run); commands that do not (sandbox, doctor, bench)
// keep their help free of them.
func (g *globalOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&g.Project, "project", "", "project directory (default: the git root of the working directory, else the working directory)")
	f.StringVar(&g.Model, "model", "", "model name (overrides MODEL)")
	f.StringVar(&g.Provider, "provider", "", "wire format: anthropic or openai (overrides PROVIDER)")
	f.StringVar(&g.BaseURL, "base-url", "", "provider endpoint (overrides BASE_URL)")
	f.StringVar(&g.Backend, "sandbox", "auto", "sandbox backend: auto, strict (the strongest this OS offers, or refuse to start), bwrap, landlock, seatbelt, docker, podman or none (none: every command asks; auto means SANDBOX from the settings when set)")
	stringArrayVar(f, &g.AddDirs, "add-dir", "", "an extra writable directory (repeatable); the only way to widen the walls")
	f.BoolVarP(&g.Continue, "continue", "c", false, "resume the latest session of this project")
	f.StringVar(&g.Resume, "resume", "", "resume the session with this id")
	f.IntVar(&g.MaxSteps, "max-steps", 0, "model calls per turn before stopping (default 200)")
	stringArrayVar(f, &g.Allow, "allow", "", "allow tool calls matching PATTERN for this run (repeatable), e.g. 'bash go test *'")
	stringArrayVar(f, &g.AllowNet, "allow-net", "", "let sandboxed commands reach HOST[:PORT] (or a preset: @go, @npm, @pypi, @crates) through the proxy for this run (repeatable); see harness help network")
	stringArrayVar(f, &g.Deny, "deny", "", "deny tool calls matching PATTERN for this run (repeatable)")
	f.BoolVar(&g.Yolo, "yolo", false, "allow every call that no rule denies (the sandbox stays on)")
	f.DurationVar(&g.Timeout, "timeout", 0, "default timeout of one shell command (default 60s)")
	f.IntVar(&g.MaxTokens, "max-tokens", 0, "output token limit per reply (overrides MAX_TOKENS)")
	f.StringVar(&g.Thinking, "thinking", "", "reasoning: off, adaptive, or a budget in tokens such as 'budget 8000' (overrides THINKING)")
	f.StringVar(&g.PermissionMode, "permission-mode", "default", "default, acceptEdits (file edits in the project without asking; commands by the rules) or plan (the project read-only in the sandbox; the turn ends in a plan)")
	stringArrayVar(f, &g.Settings, "settings", "", "a settings JSON file with hooks in Claude Code's format (repeatable); read like ~/.agents/settings.json")
	f.BoolVar(&g.AllowProjectHooks, "allow-project-hooks", false, "run the project's hooks (.agents/settings.json, .claude/settings.json, and any settings file or hook script commands can write) as they and the scripts they run are at the start, inside the sandbox, without asking; one whose script changes later is not run")
	f.StringVar(&g.Effort, "effort", "", "reasoning effort where the model takes one: low, medium, high, xhigh or max (overrides EFFORT)")
	stringArrayVar(f, &g.MCPConfigs, "mcp-config", "", "load MCP servers from FILE, in Claude Code's mcpServers format (repeatable); see harness mcp --help")
	f.BoolVar(&g.ApproveMCP, "approve-mcp", false, "run the MCP servers the project's .mcp.json defines without asking (headless runs cannot ask)")
}

// configFlags maps the flags the user set to config keys.
func (g *globalOptions) configFlags() map[string]string {
	m := map[string]string{"MODEL": g.Model, "PROVIDER": g.Provider, "BASE_URL": g.BaseURL, "THINKING": g.Thinking, "EFFORT": g.Effort}
	if g.MaxTokens > 0 {
		m["MAX_TOKENS"] = strconv.Itoa(g.MaxTokens)
	}
	return m
}
