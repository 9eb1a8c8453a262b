package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
)

// Bash runs a shell command in the sandbox.
type Bash struct {
	Env *Env
	// ReadOnly runs commands under the read-only variant of the walls
	// (sub-agents): the project cannot be written, /tmp can.
	ReadOnly bool
}

// ReadOnlyVariant returns bash under the read-only walls, or nil when the
// sandbox has no such variant (then a read-only caller gets no bash).
func (b *Bash) ReadOnlyVariant() Tool {
	if b.Env == nil || b.Env.Sandbox == nil || !sandbox.CanReadOnly(b.Env.Sandbox) {
		return nil
	}
	return &Bash{Env: b.Env, ReadOnly: true}
}

type bashArgs struct {
	Command    string `json:"command"`
	Timeout    int    `json:"timeout"`
	Background bool   `json:"background"`
}

// background says whether this bash can start background commands: the
// session's, never a sub-agent's (its read-only copy has no Jobs), so
// nothing outlives the sub-agent.
func (b *Bash) background() bool { return b.Env != nil && b.Env.Jobs != nil && !b.ReadOnly }

// Spec implements Tool.
func (b *Bash) Spec() llm.Tool {
	where := "write only inside the project and /tmp (private to this session), reaches the network only through harness's proxy " +
		"(allowed hosts; others are refused with a message), can commit but not change git config or hooks, and cannot push"
	if b.ReadOnly {
		where = "write only /tmp (private to this session): the project is read-only here, so build outputs and " +
			"test caches must go to /tmp; it reaches the network only through harness's proxy (allowed hosts; others are refused with a message)"
	}
	t := llm.Tool{
		Name: "bash",
		Description: "Run a shell command (/bin/sh -c) in the project directory, inside a sandbox: it can read the filesystem " +
			"(except secrets), " + where + ". stdin is empty, so interactive commands fail; pass flags like -y. Returns stdout and " +
			"stderr interleaved, then the exit code. Default timeout 60 seconds (timeout argument in seconds, at most 600); " +
			"on timeout the whole process tree is killed and the exit code is 124. Prefer read_file, edit_file, glob and " +
			"grep for files; use bash to build, test, and run programs.",
		Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command to run."},"timeout":{"type":"integer","description":"Timeout in seconds (default 60, max 600)."}},"required":["command"]}`),
	}
	if b.background() {
		t.Description += " background: true starts a long-running command (a dev server, a watcher) and returns its job id at once; " +
			"it keeps running, inside the same walls, until bash_stop or the end of the session. Read its new output with bash_output; " +
			"other commands reach a server it started on localhost."
		t.Schema = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"The command to run."},"timeout":{"type":"integer","description":"Timeout in seconds (default 60, max 600); not for background commands."},"background":{"type":"boolean","description":"Run in the background and return its job id at once."}},"required":["command"]}`)
	}
	return t
}

// Access implements Tool.
func (b *Bash) Access(input json.RawMessage) (Access, error) {
	var a bashArgs
	if err := decode(input, &a, "command"); err != nil {
		return Access{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return Access{}, fmt.Errorf("command is empty")
	}
	return Access{Tool: "bash", Command: a.Command}, nil
}

// Run implements Tool.
func (b *Bash) Run(ctx context.Context, input json.RawMessage) Result {
	var a bashArgs
	if err := decode(input, &a, "command"); err != nil {
		return Errorf("%v", err)
	}
	if a.Background {
		if !b.background() {
			return Errorf("background commands are not available here; run it in the foreground with a timeout")
		}
		id, err := b.Env.Jobs.Start(a.Command, b.ReadOnly)
		if err != nil {
			return Errorf("the command could not be started: %v", err)
		}
		msg := fmt.Sprintf("started in the background as %s. Read its output with bash_output {\"id\":%q}; stop it with bash_stop. It ends with the session.", id, id)
		if !sandbox.DiesWithHarness(b.Env.Sandbox) {
			msg += fmt.Sprintf(" (With the %s sandbox, what it starts may outlive harness if harness is killed; an orderly end of the session kills it.)", b.Env.Sandbox.Backend())
		}
		return Result{Content: msg}
	}
	timeout := time.Duration(a.Timeout) * time.Second
	if timeout > 600*time.Second {
		timeout = 600 * time.Second
	}
	ro := b.ReadOnly
	if b.Env.Jobs != nil {
		// Registered, so a switch into plan mode while it runs stops it
		// (narrow.go) rather than let it write on.
		var end func()
		ctx, ro, end = b.Env.Jobs.foreground(ctx, a.Command, ro)
		defer end()
	}
	jobsBefore := b.Env.Jobs.running()
	res, err := b.Env.Sandbox.Run(ctx, sandbox.Cmd{Script: a.Command, Timeout: timeout, ReadOnly: ro, Progress: progressWriter(ctx), WriteJournal: writeJournal(ctx)})
	if err != nil {
		return Errorf("the command could not be started: %v", err)
	}
	unknown := ""
	if jobsBefore || b.Env.Jobs.running() {
		// A background job's writes, in this window, are in no
		// command's set: the window is judged as a whole, as before.
		unknown = "a background command was running"
	}
	reportWrote(ctx, res, unknown)
	if note := narrowedNote(ctx); note != "" {
		res.Output = append(res.Output, note...)
	}
	if len(res.Tampered) > 0 && b.Env.Notify != nil {
		n := notice.Warning(notice.SandboxTamper, fmt.Sprintf("SANDBOX WARNING: the command %q changed protected paths: %s", clip(a.Command, 80), strings.Join(res.Tampered, ", ")))
		n.Paths = res.Tampered
		b.Env.Notify(n)
	}
	b.Env.found(res.Found)
	// What the agent's own command left is what it saw.
	b.Env.seen.refresh(func(p string) ([]byte, error) {
		data, _, err := b.Env.policy().ReadFile(p, maxFileBytes)
		return data, err
	})
	return Result{Content: FormatBash(res), IsError: res.ExitCode != 0}
}

// FormatBash renders a command's result for the model.
func FormatBash(res *sandbox.Result) string {
	var sb strings.Builder
	sb.Write(res.Output)
	if len(res.Output) > 0 && res.Output[len(res.Output)-1] != '\n' {
		sb.WriteByte('\n')
	}
	if res.Truncated > 0 {
		fmt.Fprintf(&sb, "[output limit reached: %d bytes from the middle were discarded (the start and the end are above); redirect to a file and page it]\n", res.Truncated)
	}
	if res.TimedOut {
		fmt.Fprintf(&sb, "[timed out after %s: the whole process tree was killed; narrow the command, run fewer tests, or raise timeout]\n", res.Duration.Round(time.Second))
	}
	if len(res.Tampered) > 0 {
		fmt.Fprintf(&sb, "[WARNING: protected paths changed during this command: %s; the user has been told]\n", strings.Join(res.Tampered, ", "))
	}
	for _, f := range res.Found {
		fmt.Fprintf(&sb, "[a %s appeared; it is read-only from now on and the user has been told]\n", f.String())
	}
	fmt.Fprintf(&sb, "[exit code: %d]", res.ExitCode)
	return sb.String()
}
