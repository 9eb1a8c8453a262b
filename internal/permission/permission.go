package permission

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/shellquote"
)

// Request is one tool call that needs a decision.
type Request struct {
	Tool    string // "bash", "read_file", "write_file", "edit_file", ...
	Command string // bash: the shell command
	Path    string // file tools: the path (absolute or relative to the project)
	Write   bool   // the file tool writes
	// DeclaredReadOnly: the tool says it changes nothing (an MCP tool's
	// readOnlyHint annotation). It decides only what plan mode lets
	// through (modes.go), never a rule.
	DeclaredReadOnly bool
	// Override, when Allow, lets an Ask through (a PreToolUse hook allowed
	// the call; acceptEdits mode for a file edit); when Ask, asks about a
	// call a rule allowed (a hook asked). Nothing lifts a Deny or the
	// walls. OverrideBy says who, for the record.
	Override   Verdict
	OverrideBy string
}

// Verdict is what a decision says. Verdicts are ordered by strictness, so
// the strictest of several is their maximum. The zero value is invalid and
// treated as a denial.
type Verdict int

// The verdicts, least strict first.
const (
	Allow Verdict = iota + 1
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is the outcome of Decide.
type Decision struct {
	Verdict Verdict
	// Rule is the rule or reason that decided, human-readable, e.g.
	// "deny bash curl *" or "default: ask".
	Rule string
	// Reason is the message for the model when the call is not allowed.
	Reason string

	// Parts are the parts of a bash command that were decided on their
	// own (each command, each write), in the order of the script; the
	// strictest decided. Empty for file tools.
	Parts []Part

	// patterns are the narrowest patterns that "always" records; empty
	// when the decision cannot be covered by a rule (computed command
	// names, no sandbox, parse errors...).
	patterns []tpat
	tool     string // the request's rule tool: "bash", "read" or "write"
}

// Part is one decided part of a bash command.
type Part struct {
	What    string // e.g. "git status", "redirect > main.go"
	Verdict Verdict
	Rule    string
}

// tpat is a pattern for one rule tool.
type tpat struct{ tool, pat string }

// Pattern is the pattern "always" would record ("" when "always" is not
// offered). Several are joined with "; "; one for another rule tool than
// the request's (a bash command's write) is prefixed with its tool.
func (d Decision) Pattern() string {
	var ss []string
	for _, p := range d.patterns {
		if p.tool == d.tool {
			ss = append(ss, p.pat)
		} else {
			ss = append(ss, p.tool+" "+p.pat)
		}
	}
	return strings.Join(ss, "; ")
}

// alwaysRules are the rule bodies (TOOL PATTERN) "always" records.
func (d Decision) alwaysRules() []string {
	var out []string
	for _, p := range d.patterns {
		if p.tool == "mcp" { // the rule is the tool's name alone
			out = append(out, p.pat)
			continue
		}
		out = append(out, p.tool+" "+p.pat)
	}
	return out
}

// Choice is a human's answer to a prompt.
type Choice int

// The choices of a prompt. The zero value is no choice and refuses.
const (
	Yes Choice = iota + 1
	No
	Always
	// Session allows what Always would, until harness exits, without
	// saving a rule.
	Session
)

// Answer is what a Prompter returns.
type Answer struct {
	Choice Choice
	Reason string // "no, because…" text passed to the model
}

// Prompter asks a human about a request whose decision is Ask. pattern is
// the narrowest pattern "always" would record; when it is empty, Always
// must not be offered (and is treated as Yes).
type Prompter interface {
	Prompt(ctx context.Context, req Request, d Decision, pattern string) (Answer, error)
}

// Record is one decision, for the session log.
type Record struct {
	Tool, Command, Path, Rule, Answer string
	// Message is what the model was told of a refusal ("" when allowed).
	Message string
	// Admit, for a call refused headless for want of an approval
	// (Answer AnswerHeadless), are the rules (TOOL PATTERN) that would
	// have allowed it, as --allow takes them; empty when no rule can
	// cover it and only --yolo would.
	Admit []string
}

// AnswerHeadless is the Answer of a call refused because it needed an
// approval and there was no Prompter to ask.
const AnswerHeadless = "deny (non-interactive)"

// Options configure a Gate.
type Options struct {
	// Policy is the session's sandbox policy: the walls. Every question of
	// whether a path may be read or written at all is its to answer. The
	// session's is a *walls.Live (the walls grow as commands make
	// repositories; plan mode turns the project read-only): each check
	// asks it for the current snapshot.
	Policy      walls.Source
	Project     string   // project root; empty means Policy.Project
	Home        string   // home directory for ~ in commands and rules; empty means Policy.Home
	UserFile    string   // e.g. ~/.agents/permissions; may not exist
	ProjectFile string   // <project>/.agents/permissions; may not exist
	Allow, Deny []string // --allow / --deny patterns for this run (headless)
	AllowNet    []string // --allow-net HOST[:PORT] or @PRESET for this run (see net.go)
	Yolo        bool     // allow everything not denied
	Prompter    Prompter // nil = headless: "ask" becomes a denial
	Record      func(Record)
	// Unsandboxed means the sandbox backend is "none": every bash command
	// must be asked (or --yolo), never auto-allowed.
	Unsandboxed bool
	// ReadFile reads a rules file (nil: os.ReadFile); a session's reads
	// each once, by descriptor, and refuses one the agent could have
	// written (package app).
	ReadFile func(path string) ([]byte, error)
}

// Gate decides tool calls. It is safe for concurrent use; prompts are
// serialised.
type Gate struct {
	o    Options
	pol  walls.Source
	home string

	mu    sync.RWMutex
	rules *ruleSet

	promptMu sync.Mutex
}

// New builds a Gate, loading both rule files. A malformed file is an error
// naming the file and line.
func New(o Options) (*Gate, error) {
	if o.Policy == nil {
		return nil, fmt.Errorf("permission: no sandbox policy given")
	}
	g := &Gate{o: o, pol: o.Policy, home: o.Home}
	first := o.Policy.Policy() // home and project never change
	if g.home == "" {
		g.home = first.Home()
	}
	if g.o.Project == "" {
		g.o.Project = first.Project()
	}
	g.o.Project = canon(g.o.Project)

	rs := &ruleSet{}
	if err := rs.addLines(layerDefault, "default", defaultRules, g); err != nil {
		return nil, fmt.Errorf("permission: built-in rules: %w", err)
	}
	for _, f := range []struct {
		layer int
		path  string
	}{{layerUser, o.UserFile}, {layerProject, o.ProjectFile}} {
		if f.path == "" {
			continue
		}
		read := o.ReadFile
		if read == nil {
			read = os.ReadFile
		}
		data, err := read(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("permission: reading rules: %w", err)
		}
		if err := rs.addFile(f.layer, f.path, string(data), g); err != nil {
			return nil, err
		}
	}
	for _, fl := range []struct {
		v    Verdict
		flag string
		pats []string
	}{{Allow, "--allow", o.Allow}, {Deny, "--deny", o.Deny}} {
		for _, p := range fl.pats {
			r, err := parseFlagRule(fl.v, p, g)
			if err != nil {
				return nil, fmt.Errorf("permission: %s %q: %w (write e.g. %s 'bash go test *')", fl.flag, p, err, fl.flag)
			}
			r.layer, r.origin = layerFlag, fl.flag
			rs.add(r)
		}
	}
	for _, h := range o.AllowNet {
		r, err := parseRuleLine("allow net "+strings.TrimSpace(h), g)
		if err != nil {
			return nil, fmt.Errorf("permission: --allow-net %q: %w", h, err)
		}
		r.layer, r.origin = layerFlag, "--allow-net"
		rs.add(r)
	}
	g.rules = rs
	return g, nil
}

// Rules lists every rule in force, most authoritative source last, for
// /permissions.
func (g *Gate) Rules() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for _, r := range g.rules.all {
		out = append(out, fmt.Sprintf("%s  (%s)", r.text(), r.origin))
	}
	out = append(out, "ask bash * / ask write *  (default for everything else)")
	pol := g.pol.Policy()
	out = append(out, "walls: write only under "+strings.Join(pol.Writable(), ", ")+" (not "+strings.Join(pol.ReadOnly(), ", ")+"); never read "+strings.Join(pol.DenyRead(), ", ")+"  (sandbox; no rule moves them)")
	if g.o.Unsandboxed {
		out = append(out, "no sandbox: every bash command asks")
	}
	if g.o.Yolo {
		out = append(out, "--yolo: every ask is allowed; denies and walls still hold")
	}
	return out
}

// Decide decides req without prompting.
func (g *Gate) Decide(req Request) Decision {
	g.mu.RLock()
	rs := g.rules
	g.mu.RUnlock()
	if d, denied := g.modeDenied(req); denied {
		return d
	}
	var d Decision
	switch {
	case req.Tool == "bash":
		d = g.decideBash(rs, req.Command)
	case strings.HasPrefix(req.Tool, mcpPrefix):
		d = decideMCP(rs, req.Tool)
	case req.Path != "":
		d = g.decideFile(rs, req)
	case req.Write:
		return Decision{Verdict: Deny, Rule: "deny: write without a path", Reason: "Not written: the call names no path."}
	default:
		return Decision{Verdict: Allow, Rule: "default: allow (touches no file and runs no command)"}
	}
	switch {
	case req.Override == Allow && d.Verdict == Ask:
		d.Rule = req.OverrideBy + " (was: " + d.Rule + ")"
		d.Verdict, d.Reason = Allow, ""
	case req.Override == Ask && d.Verdict == Allow:
		d.Rule = req.OverrideBy + " asked (was: " + d.Rule + ")"
		d.Verdict = Ask
	}
	if g.o.Yolo && d.Verdict == Ask {
		d.Rule = "yolo (was: " + d.Rule + ")"
		d.Verdict, d.Reason = Allow, ""
	}
	return d
}

// Check decides req, prompts when the decision is Ask, persists "always"
// answers and records the outcome. msg explains a refusal to the model.
func (g *Gate) Check(ctx context.Context, req Request) (ok bool, msg string) {
	d := g.Decide(req)
	switch d.Verdict {
	case Allow:
		g.record(req, d, "allow")
		return true, ""
	case Ask:
	default:
		g.recordRefusal(req, d, "deny", d.Reason, nil)
		return false, d.Reason
	}
	if g.o.Prompter == nil {
		msg := g.headlessMessage(req, d)
		g.recordRefusal(req, d, AnswerHeadless, msg, d.alwaysRules())
		return false, msg
	}

	g.promptMu.Lock()
	defer g.promptMu.Unlock()
	// An earlier prompt may have recorded a rule that now covers req.
	if d2 := g.Decide(req); d2.Verdict != Ask {
		if d2.Verdict == Allow {
			g.record(req, d2, "allow")
			return true, ""
		}
		g.recordRefusal(req, d2, "deny", d2.Reason, nil)
		return false, d2.Reason
	}
	pattern := d.Pattern()
	ans, err := g.o.Prompter.Prompt(ctx, req, d, pattern)
	if err != nil {
		g.record(req, d, "deny (prompt failed)")
		return false, fmt.Sprintf("Not run: the permission prompt failed (%v).", err)
	}
	if d2, denied := g.modeDenied(req); denied && ans.Choice != No && ans.Choice != 0 {
		// The mode changed while the user was asked.
		g.recordRefusal(req, d2, "deny", d2.Reason, nil)
		return false, d2.Reason
	}
	switch ans.Choice {
	case Yes:
		g.record(req, d, "yes")
		return true, ""
	case Always, Session:
		if pattern == "" {
			g.record(req, d, "yes")
			return true, ""
		}
		if ans.Choice == Session {
			if err := g.grant(d, false); err != nil {
				g.record(req, d, "yes (not remembered: "+err.Error()+")")
				return true, ""
			}
			g.record(req, d, "yes for this session: "+pattern)
			return true, ""
		}
		if err := g.persist(d); err != nil {
			g.record(req, d, "always "+pattern+" (not saved: "+err.Error()+")")
			return true, ""
		}
		g.record(req, d, "always "+pattern)
		return true, ""
	default:
		reason := strings.TrimSpace(ans.Reason)
		g.record(req, d, strings.TrimSpace("no "+reason))
		if reason == "" {
			return false, "The user refused this " + describe(req) + ". Do not retry it; ask the user or take another approach."
		}
		return false, "The user refused this " + describe(req) + ": " + reason
	}
}

func (g *Gate) headlessMessage(req Request, d Decision) string {
	allow := "--yolo"
	if len(d.patterns) > 0 {
		var flags []string
		for _, r := range d.alwaysRules() {
			flags = append(flags, "--allow "+shellquote.Quote(r))
		}
		allow = strings.Join(flags, " ") + " or --yolo"
	}
	return fmt.Sprintf("Not run: this %s needs the user's approval (%s), and harness is running in non-interactive mode, so it is not allowed. Do not retry it; find another way, or tell the user they can re-run with %s.",
		describe(req), d.Rule, allow)
}

func describe(req Request) string {
	switch {
	case req.Tool == "bash":
		return "command"
	case strings.HasPrefix(req.Tool, mcpPrefix):
		return "call of the MCP tool " + req.Tool
	case req.Write:
		return "write to " + req.Path
	default:
		return req.Tool + " of " + req.Path
	}
}

func (g *Gate) record(req Request, d Decision, answer string) {
	g.recordRefusal(req, d, answer, "", nil)
}

func (g *Gate) recordRefusal(req Request, d Decision, answer, msg string, admit []string) {
	if g.o.Record != nil {
		g.o.Record(Record{Tool: req.Tool, Command: req.Command, Path: req.Path, Rule: d.Rule, Answer: answer, Message: msg, Admit: admit})
	}
}

// persist appends an allow rule per pattern of d to the project file and
// to the rules in force. The host process writes it; the sandbox keeps the
// agent itself out of that file.
func (g *Gate) persist(d Decision) error { return g.grant(d, true) }

// grant adds an allow rule per pattern of d to the rules in force, and
// with save to the project file too.
func (g *Gate) grant(d Decision, save bool) error {
	var lines []string
	for _, r := range d.alwaysRules() {
		lines = append(lines, "allow "+r)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	rs := g.rules.clone()
	for i, l := range lines {
		r, err := parseRuleLine(l, g)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", d.alwaysRules()[i], err)
		}
		r.layer, r.origin = layerProject, "always"
		if !save {
			r.origin = "this session"
		}
		rs.add(r)
	}
	var werr error
	switch {
	case !save:
	case g.o.ProjectFile == "":
		werr = fmt.Errorf("no project permissions file configured; the rule holds for this session only")
	default:
		werr = appendRules(g.o.ProjectFile, lines)
	}
	g.rules = rs
	return werr
}

func appendRules(path string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("saving rule: %w", err)
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("saving rule: %w", err)
	}
	var b strings.Builder
	if os.IsNotExist(statErr) {
		b.WriteString("# harness permissions for this project (see `harness help permissions`).\n# Lines: allow|ask|deny  bash|read|write|<tool>  PATTERN\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("saving rule: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saving rule: %w", err)
	}
	return nil
}
