package extend

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/shellquote"
)

// Event is one point of the loop at which hooks fire.
type Event struct {
	Name      string
	Tool      string          // harness's tool name (PreToolUse, PostToolUse)
	Input     json.RawMessage // the call's arguments, harness's form
	ToolUseID string
	Result    *ToolResult // PostToolUse
	Prompt    string      // UserPromptSubmit
	Active    bool        // Stop, SubagentStop: a Stop hook already kept this turn going
	Source    string      // SessionStart: startup|resume; SessionEnd: the reason; PreCompact: manual|auto; Notification: its type
	Message   string      // Notification
	Custom    string      // PreCompact: the user's focus
}

// ToolResult is what a call returned.
type ToolResult struct {
	Content string
	IsError bool
}

// Outcome is what the hooks of one event decided, merged.
type Outcome struct {
	// Block stops what the event is about: the call (PreToolUse), the
	// prompt (UserPromptSubmit), or the end of the turn (Stop: the model
	// goes on). Reason says why: to the model, but for UserPromptSubmit
	// to the user.
	Block  bool
	Reason string
	// Feedback is for the model after a call ran (PostToolUse: exit 2 or
	// decision block).
	Feedback string
	// Permission is a PreToolUse hook's word: "allow" (no prompt),
	// "ask" (prompt even where a rule allows) or "" (the rules decide).
	Permission string
	// Input replaces the call's arguments (PreToolUse updatedInput).
	Input json.RawMessage
	// Context is added to the model's context (UserPromptSubmit and
	// SessionStart stdout, additionalContext).
	Context string
	// Stop ends the turn (continue: false); StopReason is for the user.
	Stop       bool
	StopReason string
	// Notices are for the user: failures, systemMessage, stderr where
	// Claude Code shows it to the user.
	Notices []string
}

// Approver asks the user whether a project hook may run.
type Approver interface {
	ApproveHook(ctx context.Context, h Hook) (bool, error)
}

// HookOptions configure a Hooks.
type HookOptions struct {
	Project  string
	Files    SettingsFiles
	Required []string // files that must exist (--settings)
	// Read reads the settings files (once, at NewHooks), the approvals
	// and the files hooks run, through the session's sandbox policy.
	Read      Reader
	Sandbox   sandbox.Sandbox
	Env       []string // host hooks' environment
	SessionID string
	// Transcript is the session log's path (transcript_path).
	Transcript func() string
	// Mode is the permission mode (permission_mode).
	Mode func() string
	// Approver asks about project hooks; nil is headless.
	Approver Approver
	// AllowProject (headless: --allow-project-hooks) approves the project
	// hooks as they are when the session starts, with the content of the
	// files they run; one whose file changes later still needs the user.
	AllowProject bool
	// ApprovalFile remembers approved definitions (by Key), outside the
	// project: ~/.agents/hooks-approved.
	ApprovalFile string
}

// Hooks runs a session's hooks. The settings are read once, when the
// session starts, and kept: a file changed mid-session changes nothing
// until the next session. What a hook runs is checked at every event: a
// project hook runs only while its definition and the content of the
// files it names that commands can write are as approved.
type Hooks struct {
	o     HookOptions
	hooks []Hook // read at the start, never again

	mu       sync.Mutex
	approved map[string]bool // by Key: yes (this session or remembered)
	defs     map[string]bool // by Hash: approved with other file contents
	refused  map[string]bool // asked and refused this session
	warned   map[string]bool // told already (unapproved, headless)
	askMu    sync.Mutex
	runs     hookRuns // project hooks running under writable walls (hookmode.go)
}

// NewHooks reads the settings and returns the runner and what could not
// be loaded or will not run: headless, every project hook that is not
// approved is said here, at the start.
func NewHooks(o HookOptions) (*Hooks, []error) {
	h := &Hooks{o: o, approved: map[string]bool{}, defs: map[string]bool{}, refused: map[string]bool{}, warned: map[string]bool{}}
	var warns []error
	lines, err := readApprovals(o.Read, o.ApprovalFile)
	if err != nil {
		warns = append(warns, err)
	}
	for _, l := range lines {
		h.approved[l.key] = true
		if l.def != "" {
			h.defs[l.def] = true
		}
	}
	hooks, lw := LoadHooks(o.Files, o.Read, o.Required)
	warns = append(warns, lw...)
	h.hooks = hooks
	seen := map[string]bool{}
	for _, k := range hooks {
		k = h.look(k)
		if !k.Project || seen[k.Key()] {
			continue
		}
		seen[k.Key()] = true
		switch {
		case h.approved[k.Key()]:
		case o.AllowProject:
			h.approved[k.Key()] = true
			h.defs[k.Hash()] = true
		case o.Approver == nil:
			h.warned[k.Key()] = true
			warns = append(warns, errors.New(h.unapproved(k)))
		}
	}
	return h, warns
}

// approval is one line of the approvals file: the Key, and the definition's
// Hash when the key pins file contents.
type approval struct{ key, def string }

// readApprovals reads the approvals file, which must lie out of the
// commands' reach: one that resolves into the project is the agent's to
// write, and approves nothing.
func readApprovals(r Reader, path string) ([]approval, error) {
	if path == "" {
		return nil, nil
	}
	data, real, reach, err := r.ReadFile(path, maxSettingsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hook approvals: %w; no project hook is approved", err)
	}
	if reach {
		return nil, fmt.Errorf("hook approvals: %s resolves to %s, where commands can write it, so its approvals are ignored; make it a regular file outside the project", path, real)
	}
	var out []approval
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		a := approval{key: f[0]}
		if len(f) > 1 && strings.HasPrefix(f[1], "def:") {
			a.def = strings.TrimPrefix(f[1], "def:")
		}
		out = append(out, a)
	}
	return out, nil
}

// look completes k as it stands now: the files its command names that
// commands can write, with their content. A hook from the user's own file
// that runs such a file is the agent's code: a project hook.
func (h *Hooks) look(k Hook) Hook {
	k.Scripts = h.o.Read.pins(namedPaths(k.Command, h.o.Project, h.o.Env))
	if !k.Project && len(k.Scripts) > 0 {
		k.Project = true
		k.Why = "it runs " + k.Scripts[0].Path + ", which commands can write"
	}
	return k
}

// List is the hooks in force (read when the session started), for /help.
func (h *Hooks) List() []Hook {
	if h == nil {
		return nil
	}
	out := make([]Hook, 0, len(h.hooks))
	for _, k := range h.hooks {
		out = append(out, h.look(k))
	}
	return out
}

// Approved reports whether a hook, as it stands now, may run without
// asking.
func (h *Hooks) Approved(k Hook) bool {
	k = h.look(k)
	if !k.Project {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.approved[k.Key()]
}

// Fire runs the hooks that match ev and merges what they say. Hooks run
// side by side; identical commands run once.
func (h *Hooks) Fire(ctx context.Context, ev Event) Outcome {
	var out Outcome
	if h == nil {
		return out
	}
	var run []Hook
	seen := map[string]bool{}
	for _, k := range h.hooks {
		if k.Event != ev.Name || !matches(k.Matcher, ev) || seen[k.Command] {
			continue
		}
		seen[k.Command] = true
		k = h.look(k)
		if ok, note := h.mayRun(ctx, k); !ok {
			if note != "" {
				out.Notices = append(out.Notices, note)
			}
			continue
		}
		run = append(run, k)
	}
	if len(run) == 0 {
		return out
	}
	input, err := h.input(ev)
	if err != nil {
		out.Notices = append(out.Notices, "hooks: "+err.Error())
		return out
	}
	results := make([]Outcome, len(run))
	var wg sync.WaitGroup
	for i, k := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.run(ctx, k, input)
			results[i] = interpret(ev.Name, k, res)
		}()
	}
	wg.Wait()
	for _, r := range results {
		out = merge(out, r)
	}
	return out
}

// unapproved says why k does not run headless and how to approve it.
func (h *Hooks) unapproved(k Hook) string {
	h.mu.Lock()
	changed := h.defs[k.Hash()]
	h.mu.Unlock()
	what := fmt.Sprintf("the %s hook %q from %s", k.Event, clip(k.Command, 80), k.Source)
	if changed {
		return fmt.Sprintf("hooks: %s was approved, but a file it runs changed since (%s), so it does not run: approve it again in an interactive session, or restart with --allow-project-hooks (it approves the hooks as they are when harness starts)", what, pinList(k.Scripts))
	}
	return fmt.Sprintf("hooks: %s is not approved, so it does not run (%s): approve it in an interactive session, or pass --allow-project-hooks (it approves the project's hooks as they are when harness starts)", what, k.Why)
}

func pinList(ps []Pin) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Path)
	}
	return strings.Join(names, ", ")
}

// mayRun decides whether a hook runs: a user's own runs; a project hook
// runs when its Key is approved; otherwise the user is asked (once a
// session for one Key), and headless it is skipped with a notice saying
// how to approve it.
func (h *Hooks) mayRun(ctx context.Context, k Hook) (bool, string) {
	if !k.Project {
		return true, ""
	}
	key := k.Key()
	h.mu.Lock()
	approved, refused, warned := h.approved[key], h.refused[key], h.warned[key]
	h.warned[key] = true
	h.mu.Unlock()
	if approved {
		return true, ""
	}
	if refused {
		return false, ""
	}
	if h.o.Approver == nil {
		if warned {
			return false, ""
		}
		return false, h.unapproved(k)
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.mu.Lock()
	approved = h.approved[key]
	h.mu.Unlock()
	if approved {
		return true, ""
	}
	ok, err := h.o.Approver.ApproveHook(ctx, k)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil || !ok {
		h.refused[key] = true
		return false, fmt.Sprintf("hooks: the %s hook %q from %s was not approved and does not run this session", k.Event, clip(k.Command, 80), k.Source)
	}
	h.approved[key] = true
	h.defs[k.Hash()] = true
	if err := h.remember(k); err != nil {
		return true, "hooks: approved for this session, but not remembered: " + err.Error()
	}
	return true, ""
}

func (h *Hooks) remember(k Hook) error {
	if h.o.ApprovalFile == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.o.ApprovalFile), 0o700); err != nil {
		return err
	}
	// Never through a link: the file must stay where commands cannot
	// write (readApprovals ignores it otherwise).
	f, err := os.OpenFile(h.o.ApprovalFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY|walls.ONoFollow, 0o600)
	if err != nil {
		return err
	}
	def := "-"
	if k.Key() != k.Hash() {
		def = "def:" + k.Hash()
	}
	_, err = fmt.Fprintf(f, "%s %s %s %s %s\n", k.Key(), def, k.Source, k.Event, strings.Join(strings.Fields(k.Command), " "))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// matches applies a hook's matcher: for tool events a regular expression
// over the whole tool name (Claude Code's name, or harness's), "" and "*"
// matching all; for SessionStart, PreCompact and Notification the source,
// trigger or type; other events have no matcher.
func matches(m string, ev Event) bool {
	if m == "" || m == "*" {
		return true
	}
	var names []string
	switch ev.Name {
	case PreToolUse, PostToolUse:
		names = []string{ToolName(ev.Tool), ev.Tool}
	case SessionStart, PreCompact, Notification:
		names = []string{ev.Source}
	default:
		return true
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return false
	}
	for _, n := range names {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}

// hookResult is what one hook command did.
type hookResult struct {
	code           int
	stdout, stderr string
	// stdoutOver and stderrOver: the stream went past maxHookOutput.
	stdoutOver, stderrOver bool
	err                    error
}

// maxHookOutput bounds what is read of each of a hook's stdout and
// stderr: the rest is read and dropped as it comes (the hook is not
// stopped for it; its timeout bounds it), and the result says so.
const maxHookOutput = 64 << 10

// overHookOutput is what a result says of a stream past maxHookOutput.
var overHookOutput = fmt.Sprintf("more than %d KiB, the limit harness reads from a hook", maxHookOutput>>10)

// boundedBuf keeps the first maxHookOutput bytes written to it. It is
// not a bytes.Buffer: exec copies into a writer that has ReadFrom with
// that method, past Write and its bound.
type boundedBuf struct {
	mu   sync.Mutex
	buf  []byte
	over bool
}

func (b *boundedBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := maxHookOutput - len(b.buf); n > room {
		b.over = true
		p = p[:max(room, 0)]
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *boundedBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func (b *boundedBuf) Over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// result is r with the two streams' texts and whether they went over.
func (r hookResult) with(stdout, stderr *boundedBuf) hookResult {
	r.stdout, r.stderr = stdout.String(), stderr.String()
	r.stdoutOver, r.stderrOver = stdout.Over(), stderr.Over()
	return r
}

// run runs one hook: a user's on the host (it is the user's own code, run
// as Claude Code runs it), a project's inside the walls (see doc.go).
func (h *Hooks) run(ctx context.Context, k Hook, input []byte) hookResult {
	ctx, cancel := context.WithTimeout(ctx, k.Timeout)
	defer cancel()
	if k.Project {
		return h.runInside(ctx, k, input)
	}
	var stdout, stderr boundedBuf
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", k.Command)
	cmd.Dir = h.o.Project
	cmd.Env = append(append([]string(nil), h.o.Env...), "CLAUDE_PROJECT_DIR="+h.o.Project, "HARNESS_PROJECT_DIR="+h.o.Project)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	err := cmd.Run()
	res := hookResult{}.with(&stdout, &stderr)
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.err = fmt.Errorf("timed out after %s", k.Timeout)
	case ctx.Err() != nil:
		res.err = errors.New("stopped: the turn was interrupted")
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		res.err = err
	}
	return res
}

// runInside runs a project hook in the session's sandbox; its input goes
// to stdin through a here-document with a random delimiter (the input is
// one line of JSON, so no line of it can be the delimiter).
func (h *Hooks) runInside(ctx context.Context, k Hook, input []byte) hookResult {
	if h.o.Sandbox == nil {
		return hookResult{err: errors.New("no sandbox to run a project hook in")}
	}
	var r [8]byte
	rand.Read(r[:])
	eof := "HARNESS_HOOK_" + hex.EncodeToString(r[:])
	script := "CLAUDE_PROJECT_DIR=" + shellquote.Quote(h.o.Project) + "; HARNESS_PROJECT_DIR=$CLAUDE_PROJECT_DIR; export CLAUDE_PROJECT_DIR HARNESS_PROJECT_DIR\n" +
		"(\n" + k.Command + "\n) <<'" + eof + "'\n" + string(input) + "\n" + eof + "\n"
	var stdout, stderr boundedBuf
	ctx, ro, end := h.runs.start(ctx, h.projectReadOnly)
	defer end()
	res, err := h.o.Sandbox.Run(ctx, sandbox.Cmd{Script: script, Timeout: k.Timeout, ReadOnly: ro, Stdout: &stdout, Stderr: &stderr})
	if errors.Is(context.Cause(ctx), errNarrowed) {
		err = errNarrowed
	}
	out := hookResult{err: err}.with(&stdout, &stderr)
	if res != nil {
		out.code = res.ExitCode
		if res.TimedOut || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			out.err = fmt.Errorf("timed out after %s", k.Timeout)
		}
	}
	return out
}

// hookOutput is the JSON a hook may print on stdout (exit 0).
type hookOutput struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	SystemMessage      string `json:"systemMessage"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// interpret applies Claude Code's contract: exit 0 is success (JSON on
// stdout is read; plain stdout is context for UserPromptSubmit and
// SessionStart), exit 2 blocks and its stderr goes to the model (to the
// user for UserPromptSubmit and the events that cannot block), any other
// status is an error shown to the user, and the action goes on.
func interpret(event string, k Hook, r hookResult) Outcome {
	var o Outcome
	name := fmt.Sprintf("%s hook %q", event, clip(k.Command, 60))
	overNote := ""
	if over := r.overStreams(); len(over) > 0 {
		overNote = "; it printed " + overHookOutput + ", " + strings.Join(over, " and ") + " (the rest was dropped)"
	}
	if r.err != nil {
		o.Notices = append(o.Notices, name+" failed: "+r.err.Error()+overNote)
		return o
	}
	stderr := strings.TrimSpace(r.stderr)
	switch r.code {
	case 0:
	case 2:
		return blocked(event, k, r, name, stderr)
	default:
		msg := fmt.Sprintf("%s failed (exit %d)", name, r.code)
		if stderr != "" {
			msg += ": " + clip(stderr, 400)
		}
		o.Notices = append(o.Notices, msg+overNote)
		return o
	}
	if r.stdoutOver {
		// Cut JSON is no answer, and cut text no context: nothing of it
		// is used.
		o.Notices = append(o.Notices, name+" printed "+overHookOutput+", on stdout: its output was ignored (the hook decided nothing)")
		return o
	}
	stdout := strings.TrimSpace(r.stdout)
	var j hookOutput
	if !strings.HasPrefix(stdout, "{") || json.Unmarshal([]byte(stdout), &j) != nil {
		if stdout != "" && (event == UserPromptSubmit || event == SessionStart) {
			o.Context = stdout
		}
		return o
	}
	return fromJSON(event, k, &j)
}

// overStreams names the streams the hook printed too much on.
func (r hookResult) overStreams() []string {
	var over []string
	if r.stdoutOver {
		over = append(over, "on stdout")
	}
	if r.stderrOver {
		over = append(over, "on stderr")
	}
	return over
}

// blocked is the outcome of exit status 2: stderr, or a note when there is
// none, goes where the event sends a block.
func blocked(event string, k Hook, r hookResult, name, stderr string) Outcome {
	var o Outcome
	if stderr == "" {
		stderr = "blocked by a " + event + " hook (" + clip(k.Command, 60) + ")"
	}
	if r.stderrOver {
		stderr += "\n[harness: the hook printed " + overHookOutput + ", on stderr; the rest was dropped]"
	}
	switch event {
	case PreToolUse, Stop, SubagentStop, UserPromptSubmit:
		o.Block, o.Reason = true, stderr
	case PostToolUse:
		o.Feedback = stderr
	default:
		o.Notices = append(o.Notices, name+": "+stderr)
	}
	return o
}

// fromJSON is the outcome of the JSON a hook printed with exit status 0.
func fromJSON(event string, k Hook, j *hookOutput) Outcome {
	var o Outcome
	if j.SystemMessage != "" {
		o.Notices = append(o.Notices, j.SystemMessage)
	}
	if j.Continue != nil && !*j.Continue {
		o.Stop, o.StopReason = true, j.StopReason
	}
	o.Context = j.HookSpecificOutput.AdditionalContext
	switch event {
	case PreToolUse:
		preToolUseDecision(&o, k, j)
	case PostToolUse:
		if j.Decision == "block" {
			o.Feedback = j.Reason
		}
	case UserPromptSubmit, Stop, SubagentStop:
		if j.Decision == "block" {
			o.Block, o.Reason = true, j.Reason
		}
	}
	return o
}

// preToolUseDecision reads a PreToolUse hook's permission decision, in the
// current form or the older decision field, and any input it rewrote.
func preToolUseDecision(o *Outcome, k Hook, j *hookOutput) {
	hs := j.HookSpecificOutput
	d := hs.PermissionDecision
	reason := hs.PermissionDecisionReason
	switch j.Decision { // the older form
	case "approve":
		d = "allow"
	case "block":
		d, reason = "deny", j.Reason
	}
	switch d {
	case "deny":
		o.Block, o.Reason = true, reason
		if o.Reason == "" {
			o.Reason = "denied by a PreToolUse hook (" + clip(k.Command, 60) + ")"
		}
	case "allow", "ask":
		o.Permission = d
	}
	if len(hs.UpdatedInput) > 0 && string(hs.UpdatedInput) != "null" {
		o.Input = hs.UpdatedInput
	}
}

var permissionRank = map[string]int{"": 0, "allow": 1, "ask": 2}

// merge combines two outcomes: any block blocks, the strictest permission
// wins, texts are joined.
func merge(a, b Outcome) Outcome {
	a.Block = a.Block || b.Block
	a.Reason = join(a.Reason, b.Reason)
	a.Feedback = join(a.Feedback, b.Feedback)
	if permissionRank[b.Permission] > permissionRank[a.Permission] {
		a.Permission = b.Permission
	}
	if b.Input != nil {
		a.Input = b.Input
	}
	a.Context = join(a.Context, b.Context)
	if b.Stop {
		a.Stop, a.StopReason = true, join(a.StopReason, b.StopReason)
	}
	a.Notices = append(a.Notices, b.Notices...)
	return a
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
