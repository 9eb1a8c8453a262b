package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X ...cli.Version=v1.2.3";
// otherwise it comes from the module version or the VCS revision Go
// records in the binary, so a bug report says which build it was.
var Version = buildVersion()

func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return "dev"
	case dirty:
		return "dev-" + rev + "+dirty"
	}
	return "dev-" + rev
}

// Stdio is the standard streams of one invocation; tests replace them.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// ExitError carries a specific exit code to main.
type ExitError struct {
	Code int
	Err  error // nil when the message was already printed
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks bad command-line usage (exit 2).
func usageError(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

const exitStatusHelp = `
EXIT STATUS
  0    success
  1    failure (the agent or a provider failed; the message says what to do)
  2    bad usage (unknown flag, missing prompt)
`

// Main runs harness with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	root := newRootCommand(stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stdio.Err, "harness:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(stdio.Err, "harness:", err)
	if isUsage(err) {
		return 2
	}
	return 1
}

// isUsage recognises cobra's own argument and flag errors.
func isUsage(err error) bool {
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(err.Error(), p) {
			return true
		}
	}
	return false
}

func newRootCommand(stdio Stdio) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "harness [flags]",
		Short: "A coding agent for the terminal, inside kernel walls",
		Long: `harness runs a language model as a coding agent in your project: it reads code, runs
commands in a sandbox (read anywhere but secrets, write only the project, no network,
.git read-only) and edits files, asking you about what matters.

Run without arguments for an interactive session; "harness run PROMPT" runs one task
headless. Configuration lives in ~/.agents/env (see the README).` + exitStatusHelp,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChat(cmd.Context(), g, stdio)
		},
	}
	g.register(root)
	root.AddCommand(
		newRunCommand(g, stdio),
		newSandboxCommand(),
		newDoctorCommand(),
		newBenchCommand(),
		newSessionsCommand(g, stdio),
		newModelsCommand(stdio),
		newPermissionsTopic(),
		newCacheCommand(stdio),
	)
	return root
}

// stdin returns the process's standard input when stdio has none.
func (s Stdio) stdin() io.Reader {
	if s.In == nil {
		return os.Stdin
	}
	return s.In
}
