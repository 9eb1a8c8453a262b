// Package notice is what the harness tells the user beside the
// conversation (a context edit, a compaction, a sandbox warning) as a
// typed value: the terminal shows Text, loudly for a Warning, and
// stream-json writes the whole object, so no front end or consumer parses
// sentences to learn what happened.
package notice

// Kind says what happened; the fields a kind fills are listed with it.
type Kind string

const (
	ContextEdit    Kind = "context_edit"        // a context layer edited the history: Layer, Blocks
	Compacted      Kind = "compacted"           // the history was summarised: TokensBefore, TokensAfter
	CompactFailed  Kind = "compact_failed"      // Err
	Overflow       Kind = "context_overflow"    // the provider said the context is too long
	MaxTokens      Kind = "max_tokens"          // a reply was cut at the output limit
	OutputRaised   Kind = "output_limit_raised" // Limit is the new output limit
	CutToolCall    Kind = "cut_tool_call"       // a reply was cut inside a tool call: Tool, Limit
	Refusal        Kind = "refusal"             // the model refused; its reply is not kept
	SpillFailed    Kind = "spill_failed"        // a long tool result could not be spilled: Err
	DisplayError   Kind = "display_error"       // an observer panicked: Err
	Provider       Kind = "provider"            // something the provider adapter noticed (a field the server rejected)
	SandboxTamper  Kind = "sandbox_tamper"      // protected paths changed: Paths
	SandboxFinding Kind = "sandbox_finding"     // a repository or hooks path appeared: Paths
	LogFailed      Kind = "log_failed"          // the session log could not record something: Err
	Hook           Kind = "hook"                // a hook failed, was not approved, or has a message for the user

	// What opening a session found (app.Session.Warnings).
	SandboxWeaker Kind = "sandbox_weaker" // the walls are weaker than the strongest this OS offers
	SandboxNone   Kind = "sandbox_none"   // no sandbox: every command asks
	Config        Kind = "config"         // a setting or the settings file needs attention
	LogTorn       Kind = "log_torn"       // the resumed log's torn last line was skipped
	LogDamaged    Kind = "log_damaged"    // lines of the resumed log could not be read; the history was repaired
	Instructions  Kind = "instructions"   // AGENTS.md or a skill could not be read
	Window        Kind = "context_window" // the server runs the model with a smaller window
	PromptChanged Kind = "prompt_changed" // the system prompt or tools differ from the resumed session's
	TodosLost     Kind = "todos_lost"     // the resumed plan could not be restored
	CallsLost     Kind = "calls_lost"     // calls were running when the last session stopped
	MCP           Kind = "mcp"            // an MCP server was not approved, failed to start, stopped or changed its tools
	LSP           Kind = "lsp"            // a language server is not installed, did not start or stopped: edits go without its errors
)

// Level is how loud a notice is.
type Level string

const (
	LevelInfo    Level = "info"
	LevelWarning Level = "warning" // a wall was tested or something was lost: shown loud
)

// Notice is one thing the user is told.
type Notice struct {
	Kind  Kind   `json:"kind"`
	Level Level  `json:"level"`
	Text  string `json:"text"` // one line for people

	Layer        string   `json:"layer,omitempty"`
	Blocks       int      `json:"blocks,omitempty"`
	TokensBefore int      `json:"tokens_before,omitempty"`
	TokensAfter  int      `json:"tokens_after,omitempty"`
	Limit        int      `json:"limit,omitempty"`
	Tool         string   `json:"tool,omitempty"`
	Paths        []string `json:"paths,omitempty"`
	Err          string   `json:"error,omitempty"`
}

// Info is a notice of kind at LevelInfo.
func Info(kind Kind, text string) Notice { return Notice{Kind: kind, Level: LevelInfo, Text: text} }

// Warning is a notice of kind at LevelWarning.
func Warning(kind Kind, text string) Notice {
	return Notice{Kind: kind, Level: LevelWarning, Text: text}
}

// String is the text, so a notice prints as what people read.
func (n Notice) String() string { return n.Text }
