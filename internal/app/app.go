package app

import (
	"context"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/lsp"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/autorun"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/skills"
	"github.com/harness-dev/harness/internal/tools"
)

// Options are what a front end decides about a session, and the parts of
// the host it runs on.
type Options struct {
	// Source is the configuration's input: home, environment and the
	// flags the user set, as the caller read them from the process.
	Source config.Source
	// WorkDir is where harness was started: without Project, the
	// project is its git root, else WorkDir itself.
	WorkDir string
	// CacheDir is the user's cache directory (os.UserCacheDir); spill
	// files go under it unless it is empty or under /tmp.
	CacheDir string
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	Project  string        // --project; "" finds it from WorkDir
	AddDirs  []string      // extra writable directories
	Backend  string        // sandbox backend name; "" is auto; BackendStrict: the strongest or nothing
	Timeout  time.Duration // default timeout of one command; 0 is the sandbox's
	Continue bool          // resume the latest session of the project
	Resume   string        // resume this session id (or unique prefix)
	MaxSteps int           // model calls per turn; 0 is the agent's default
	Allow    []string      // permission rules for this run
	AllowNet []string      // hosts (or @presets) commands may reach for this run
	Deny     []string
	Yolo     bool
	// Prompter asks the user about calls; nil is headless (what would
	// ask is refused).
	Prompter permission.Prompter
	// OnDecision, when set, is told every permission decision once it is
	// logged (harness run tallies what was refused).
	OnDecision func(permission.Record)

	// PermissionMode is --permission-mode: default, acceptEdits or plan.
	PermissionMode string
	// Settings are --settings files: hooks of the user's, like ~/.agents/settings.json.
	Settings []string
	// AllowProjectHooks approves the project's hooks as they are at the
	// start (headless: --allow-project-hooks).
	AllowProjectHooks bool
	// HookApprover asks the user about project hooks; nil: headless.
	HookApprover extend.Approver
	// ReservedCommands are the front end's own slash commands (without
	// the slash): a custom command of such a name is ignored.
	ReservedCommands []string
	// MCPConfigs are --mcp-config files (mcpServers format), on top of
	// ~/.agents/mcp.json and the project's .mcp.json.
	MCPConfigs []string
	// ApproveMCP runs the project's MCP servers without asking, for this
	// run (--approve-mcp; headless runs have no one to ask).
	ApproveMCP bool
	// Elicit shows an MCP server's question to the user as a form (the
	// interactive session); nil: such questions are declined at once,
	// with a notice (headless).
	Elicit func(ctx context.Context, q *mcp.Elicitation) (mcp.ElicitAnswer, error)
	// MCPInBackground starts the MCP servers beside the session rather
	// than before Open returns (the interactive session: its prompt is
	// usable at once); Session.WatchMCP tells how each start ended.
	MCPInBackground bool
	// Price returns a model's price per million tokens under cfg (the
	// catalogue with the user's models.json and PRICE_* settings), for
	// the cost ledger; nil: every price unknown.
	Price func(cfg *config.Config, model string) (llm.Price, bool)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// BackendStrict asks for the strongest backend this OS offers and
// refuses to start without it (--sandbox strict).
const BackendStrict = "strict"

// Walls says which sandbox a session runs in and, when it is weaker than
// the strongest this OS offers, what it cannot hold: shown in the banner,
// in harness run's stderr and JSON, and in /sandbox.
type Walls struct {
	Backend    string   `json:"backend"`
	Strongest  string   `json:"strongest,omitempty"` // "" where this OS has no sandbox
	Weaker     bool     `json:"weaker"`
	CannotHold []string `json:"cannot_hold,omitempty"`
}

// Session is everything one conversation runs on, wired together.
type Session struct {
	ID       string
	Home     string
	Config   *config.Config
	Sandbox  sandbox.Sandbox
	Proxy    *netproxy.Proxy // the commands' way out, decided by Gate's net rules
	Gate     *permission.Gate
	Registry *tools.Registry
	History  *history.History
	Log      *sessionlog.Log
	Agent    *agent.Agent
	// Ledger is the session's cost ledger: every request of the agent and
	// its sub-agents, restored from the log on resume.
	Ledger   *ledger.Book
	Provider llm.Provider
	Resumed  bool
	Warnings []notice.Notice // what opening it found, typed: the banner and harness run show Text, stream-json the object
	Todos    *tools.TodoList // the plan of write_todos, shown in the reminder
	Jobs     *tools.Jobs     // background commands (bash background: true), killed when the session closes
	Walls    Walls           // the sandbox in force, against the strongest this OS offers
	Skills   *skills.Set
	// Checkpoints keep what every call that can write replaced, for undo
	// (nil when the store could not be opened: a warning says so).
	Checkpoints *checkpoint.Store
	Commands    *extend.Commands // custom slash commands
	// Slash is every slash command beyond the front end's built-ins:
	// custom commands, skills, and what else registers (MCP prompts).
	Slash *extend.Registry
	Hooks *extend.Hooks
	Modes *extend.Modes // the permission mode and an accepted plan

	mu           sync.Mutex
	grants       map[string]bool // allowed-tools the user approved this session (by text)
	startContext string          // SessionStart hooks' context, for the first prompt
	end          string          // why the session ends, for SessionEnd
	endArmed     bool            // SessionStart fired; SessionEnd fires at Close
	MCP          *mcp.Manager    // the session's MCP servers (none configured: an empty one)
	mcpStarts    *mcpStarts      // the servers starting beside the session (MCPInBackground), else nil
	LSP          *lsp.Manager    // the language servers of the edit tools (nil: LSP=off or no walls)
	// LaterRun watches the files of the writable roots that other
	// programs run later on the user's machine (hooks managers, .envrc,
	// editor tasks, venv .pth, the next session's instructions…): the
	// walls let commands write them, so the front ends report changes.
	LaterRun *autorun.Watch

	notify  func(notice.Notice)               // where tool notices go; set by the front end
	subObs  func(label string) agent.Observer // how sub-agents are shown; set by the front end
	cleanup []func()
}

// Close releases the sandbox and the log, newest first.
func (s *Session) Close() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
	s.cleanup = nil
}

// SetNotify routes the notices of tools and the log (sandbox tampering,
// a record the disk refused) to the front end.
func (s *Session) SetNotify(f func(notice.Notice)) { s.notify = f }

func (s *Session) tell(n notice.Notice) {
	if s.notify != nil {
		s.notify(n)
	}
}

// SetSubagentObserver routes what sub-agents do to the front end.
func (s *Session) SetSubagentObserver(f func(label string) agent.Observer) { s.subObs = f }

// subagentObserver is what the task tool calls for each sub-agent.
func (s *Session) subagentObserver(label string) agent.Observer {
	if s.subObs == nil {
		return nil
	}
	return s.subObs(label)
}

// Open builds a Session. It validates the provider configuration, so
// commands that need no model do not call it. The steps run in order; each
// says in its name what it adds, and the later ones use what the earlier
// ones built (TestStepsInOrder runs them one by one).
func Open(ctx context.Context, o Options) (*Session, error) {
	b := newBuilder(o)
	for _, st := range b.steps() {
		if err := st.run(ctx); err != nil {
			b.s.Close()
			return nil, err
		}
	}
	return b.s, nil
}

func newBuilder(o Options) *builder {
	return &builder{o: o, s: &Session{Home: o.Source.Home}}
}

// step is one named part of Open.
type step struct {
	name string
	run  func(context.Context) error
}

func (b *builder) steps() []step {
	return []step{
		{"loadConfig", b.loadConfig},
		{"resolveProject", b.resolveProject},
		{"openSandbox", b.openSandbox},
		{"openLog", b.openLog},
		{"newGate", b.newGate},
		{"startMCP", b.startMCP},
		{"buildTools", b.buildTools},
		{"newProvider", b.newProvider},
		{"newHistory", b.newHistory},
		{"loadExtensions", b.loadExtensions},
		{"buildAgent", b.buildAgent},
		{"logPrompt", b.logPrompt},
		{"restore", b.restore},
		{"startHooks", b.startHooks},
	}
}
