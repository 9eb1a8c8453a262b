package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/harness-dev/harness/internal/termsafe"
	"github.com/harness-dev/harness/internal/ui"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X ...cli.Version=v1.2.3";
// when it is empty, version takes the module version or the VCS revision
// Go records in the binary, so a bug report says which build it was. It is
// not computed at init: -X only sets a variable without an initialiser
// that calls a function, and the binary's re-execs (sandbox helper,
// launcher) never print it.
var Version string

// version is Version, or what the build recorded.
func version() string {
	if Version != "" {
		return Version
	}
	return buildVersion()
}

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

// UsageError is bad command-line usage: an unknown flag or command, a bad
// flag value, a wrong number of arguments, a missing prompt. Main exits 2
// for it. Cobra's own flag and argument errors are wrapped into it where
// cobra reports them (SetFlagErrorFunc, each command's Args), so no error
// is classified by its text.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usageError returns a UsageError with a message saying what to do.
func usageError(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Exit statuses shared by the commands.
const (
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as shells report it; also for SIGTERM
)

// exitStatusHelp ends the help of the commands that run the agent
// headless (run, batch): they handle SIGINT and SIGTERM themselves.
const exitStatusHelp = `
EXIT STATUS
  0    success
  1    failure (the agent or a provider failed; the message says what to do)
  2    bad usage (unknown flag, missing prompt)
  130  interrupted (SIGINT or SIGTERM); completed steps are saved
`

// chatExitHelp ends the interactive session's help: there Ctrl-C stops a
// turn, and only SIGTERM or SIGHUP end the session from outside.
const chatExitHelp = `
EXIT STATUS
  0    the session ended (/exit, Ctrl-D, or Ctrl-C twice at the prompt)
  1    failure (the session could not start; the message says what to do)
  2    bad usage (unknown flag)
  130  ended by SIGTERM or SIGHUP; completed steps are saved
`

// plainExitHelp ends the help of the commands that only read or print
// (sessions, models, cache, batch collect): a signal ends them as it ends
// any program, with nothing to save.
const plainExitHelp = `
EXIT STATUS
  0    success
  1    failure (the message says what to do)
  2    bad usage (unknown flag, wrong arguments)
`

// Main runs harness with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	root := newRootCommand(stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	return exitCode(root.ExecuteContext(ctx), stdio.Err)
}

// exitCode prints err (unless already printed) and decides the exit
// status by its type.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(stderr, errorLine(ee.Err))
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, errorLine(err))
	var ue *UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// errorLine is err as main prints it: once prefixed with "harness:" (an
// error that already starts with it is not prefixed twice), and through
// the sanitiser, since errors carry names from outside (files, servers,
// settings).
func errorLine(err error) string {
	msg := strings.TrimPrefix(err.Error(), "harness: ")
	return "harness: " + ui.Visible(msg)
}

// markUsage makes every flag and argument error of cmd and its
// subcommands a UsageError.
func markUsage(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				var ue *UsageError
				if errors.As(err, &ue) {
					return err
				}
				return &UsageError{Err: err}
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		markUsage(c)
	}
}

func newRootCommand(stdio Stdio) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "harness [flags]",
		Short: "A coding agent for the terminal, inside kernel walls",
		Long: `harness runs a language model as a coding agent in your project: it reads code, runs
commands in a sandbox (read anywhere but secrets, write only the project, no network;
git commits work, git config and hooks stay read-only) and edits files, asking you
about what matters.

Run without arguments for an interactive session; "harness run PROMPT" runs one task
headless. Configuration lives in ~/.agents/env (see docs/configuration.md).` + chatExitHelp,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChat(cmd.Context(), g, stdio)
		},
	}
	g.register(root)
	// The commands that print for a person print through termsafe.Guard: what
	// they show of the outside (file names, servers' commands, settings,
	// sessions) is sanitised where it is formatted, and the guard makes
	// sure a string that was not can at most change a colour. The chat
	// draws through its own renderer; sandbox passes the command's own
	// output through unchanged, as running it directly would; run's
	// standard output may be stream-json for a program.
	plain := stdio.guarded()
	runIO := stdio
	runIO.Err = plain.Err
	root.AddCommand(
		newRunCommand(g, runIO),
		newACPCommand(g, stdio),
		newSandboxCommand(),
		newDoctorCommand(),
		newBenchCommand(),
		newSessionsCommand(g, plain),
		newUndoCommand(g, plain),
		newModelsCommand(plain),
		newPermissionsTopic(plain),
		newCacheCommand(plain),
		newBatchCommand(runIO),
		newNetworkTopic(),
		newMCPCommand(plain),
	)
	markUsage(root)
	wrapHelp(root)
	return root
}

// guarded returns s with its output streams behind termsafe.Guard.
func (s Stdio) guarded() Stdio {
	if s.Out != nil {
		s.Out = termsafe.Guard(s.Out)
	}
	if s.Err != nil {
		s.Err = termsafe.Guard(s.Err)
	}
	return s
}

// stdin returns the process's standard input when stdio has none.
func (s Stdio) stdin() io.Reader {
	if s.In == nil {
		return os.Stdin
	}
	return s.In
}
