package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
)

// Env is what the built-in tools share: the session's sandbox and its policy.
type Env struct {
	Sandbox sandbox.Sandbox
	// Notify reports something the user must see (a sandbox tamper warning).
	Notify func(notice.Notice)
	// Wrote, when set, is told of every file write_file or edit_file wrote,
	// so the reminder does not send the model back to re-read its own work.
	Wrote func(path string)
	// Images says the model takes images: read_file of a PNG, JPEG, GIF
	// or WebP then returns the picture itself.
	Images bool
	// Jobs, when set, lets bash start background commands (the session's).
	Jobs *Jobs
	// Diagnose, when set, is asked after every write_file and edit_file
	// for the language server's errors in the file's new text (the
	// session's lsp.Manager, bounded in time); what it returns is
	// appended to the tool's result.
	Diagnose func(ctx context.Context, path string, text []byte) string

	seen seen // what the agent last saw of each file (seen.go)
}

func (e *Env) wrote(path string) {
	if e.Wrote != nil {
		e.Wrote(path)
	}
}

func (e *Env) policy() *walls.Policy { return e.Sandbox.Policy() }

// diagnose is what Diagnose says of path's new text, set apart from the
// tool's own line; "" without a Diagnose or with nothing to say.
func (e *Env) diagnose(ctx context.Context, path string, text []byte) string {
	if e.Diagnose == nil || path == "" {
		return ""
	}
	if d := e.Diagnose(ctx, path, text); d != "" {
		return "\n\n" + d
	}
	return ""
}

// write writes a file through the policy and tells the user loudly of
// protected paths that changed meanwhile and repositories that appeared.
func (e *Env) write(path string, data []byte) (walls.WriteResult, error) {
	res, err := e.Sandbox.Live().WriteFile(path, data)
	if err == nil {
		e.wrote(path)
		e.seen.record(path, data)
	}
	if len(res.Tampered) > 0 && e.Notify != nil {
		n := notice.Warning(notice.SandboxTamper, fmt.Sprintf("SANDBOX WARNING: protected paths changed while harness wrote %s: %s", path, strings.Join(res.Tampered, ", ")))
		n.Paths = res.Tampered
		e.Notify(n)
	}
	e.found(res.Found)
	return res, err
}

// found reports repositories and hooks paths that appeared mid-session.
func (e *Env) found(fs []walls.Finding) {
	if e.Notify == nil {
		return
	}
	for _, f := range fs {
		n := notice.Warning(notice.SandboxFinding, "SANDBOX WARNING: a "+f.String()+" appeared during the session; it is read-only to the agent from now on. Check it before you run git there.")
		n.Paths = []string{f.Path}
		e.Notify(n)
	}
}

// abs resolves a path the model gave relative to the project root.
func (e *Env) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.policy().Project(), p)
}

// rel shows a path relative to the project when it is inside it.
func (e *Env) rel(p string) string {
	if r, err := filepath.Rel(e.policy().Project(), p); err == nil && !filepath.IsAbs(r) && r != ".." && !startsDotDot(r) {
		return r
	}
	return p
}

func startsDotDot(r string) bool {
	return len(r) >= 3 && r[:3] == ".."+string(filepath.Separator)
}

// Builtins returns the core tools in their fixed order.
func Builtins(e *Env) []Tool {
	return []Tool{
		&Bash{Env: e},
		&ReadFile{Env: e},
		&WriteFile{Env: e},
		&EditFile{Env: e},
		&Glob{Env: e},
		&Grep{Env: e},
	}
}
