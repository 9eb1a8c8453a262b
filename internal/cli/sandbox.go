package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"

	"github.com/harness-dev/harness/internal/shellquote"
)

// sandboxOptions are the flags of `harness sandbox`.
type sandboxOptions struct {
	Project string
	AddDirs []string
	Timeout time.Duration
	Backend string
	// AllowNet are hosts the command may reach through the proxy, on top
	// of the net rules in the permission files; nothing asks here.
	AllowNet []string
}

func newSandboxCommand() *cobra.Command {
	var opts sandboxOptions
	cmd := &cobra.Command{
		Use:   "sandbox [--project DIR] [--timeout DUR] [--backend auto|bwrap|landlock|seatbelt|none] -- CMD [ARGS...]",
		Short: "Run one command inside the session's sandbox",
		Long: `Run one command under the sandbox policy that a session for the project
would use: read anywhere except secrets, write only inside the project (with
.git and .agents read-only), no network, a private /tmp, a clean environment,
and a timeout that kills every process the command started.

Standard output and standard error pass through; standard input is /dev/null.
Use it to check what a command can do before the agent runs it.

EXIT STATUS
  the command's own exit status, or:
  1    the sandbox could not be set up (the message says what to do)
  2    bad usage (no command given, unknown flag)
  124  the command timed out and was killed with all its processes
  125  the sandbox's inner stage could not put up its walls; nothing ran
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("no command given: harness sandbox -- CMD [ARGS...]")
			}
			return nil
		},
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSandbox(cmd.Context(), opts, args, Stdio{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Project, "project", ".", "project directory: the only writable place")
	stringArrayVar(f, &opts.AddDirs, "add-dir", "", "an extra writable directory (repeatable)")
	f.DurationVar(&opts.Timeout, "timeout", walls.DefaultTimeout, "kill the command and all its processes after this long")
	f.StringVar(&opts.Backend, "backend", sandbox.BackendAuto, "auto, bwrap, landlock, seatbelt or none")
	f.StringVar(&opts.Backend, "sandbox", sandbox.BackendAuto, "same as --backend")
	_ = f.MarkHidden("sandbox")
	stringArrayVar(f, &opts.AllowNet, "allow-net", "", "let the command reach HOST[:PORT] or @PRESET through the proxy (repeatable); net rules in the permission files apply too, and anything else is refused")
	return cmd
}

// runSandbox runs argv, quoted for /bin/sh, under the project's policy.
func runSandbox(ctx context.Context, opts sandboxOptions, argv []string, stdio Stdio) error {
	sb, err := openSandbox(ctx, opts.Project, opts.AddDirs, opts.Timeout, opts.Backend, opts.AllowNet...)
	if err != nil {
		return err
	}
	defer sb.Close()
	if sb.Backend() == sandbox.BackendNone {
		fmt.Fprintln(stdio.Err, "harness: no sandbox (--backend none): the command runs directly on this machine")
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellquote.Quote(a)
	}
	r, err := sb.Run(ctx, sandbox.Cmd{Script: "exec " + strings.Join(quoted, " "), Stdout: stdio.Out, Stderr: stdio.Err})
	if err != nil {
		return err
	}
	if len(r.Tampered) > 0 {
		fmt.Fprintf(stdio.Err, "harness: WARNING: the command changed protected paths: %s\n", strings.Join(r.Tampered, ", "))
	}
	if r.ExitCode != 0 {
		return &ExitError{Code: r.ExitCode}
	}
	return nil
}

// openSandbox computes the policy for project and opens backend, with the
// network proxy deciding by the permission files' net rules and allowNet,
// headless: a connection no rule allows is refused.
func openSandbox(ctx context.Context, project string, addDirs []string, timeout time.Duration, backend string, allowNet ...string) (sandbox.Sandbox, error) {
	home, _ := os.UserHomeDir()
	env := os.Environ()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: project, AddDirs: addDirs, Home: home, Timeout: timeout,
		Environ: env, CacheRoot: walls.CacheRoot(home, env)})
	if err != nil {
		return nil, err
	}
	live := walls.NewLive(pol) // the gate (through the proxy) and the sandbox share it
	gateOpts := permission.Options{
		Policy: live, Home: home,
		UserFile:    filepath.Join(home, ".agents", "permissions"),
		ProjectFile: filepath.Join(pol.Project(), ".agents", "permissions"),
		AllowNet:    allowNet,
		ReadFile:    app.RulesReader(live),
	}
	gate, err := permission.New(gateOpts)
	if err != nil {
		return nil, err
	}
	px, err := permission.NewProxy(gateOpts, func() *permission.Gate { return gate }, nil)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Open(ctx, live, backend, sandbox.WithProxy(px), sandbox.WithEnv(os.Getenv))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return sb, nil
}
