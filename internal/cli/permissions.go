package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"
)

// checkOptions are the flags of `harness permissions check`.
type checkOptions struct {
	Project     string
	AddDirs     []string
	Allow, Deny []string
	Yolo        bool
	Backend     string
}

// newPermissionsCheck is `harness permissions check 'COMMAND'`: the gate's
// decision on a command, and which part of it decided, without running it.
func newPermissionsCheck(stdio Stdio) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [flags] 'COMMAND'",
		Short: "Show how a shell command would be decided, and why",
		Long: `Decide a shell command as the agent's bash tool call would be decided in this project,
without running it: the verdict (allow, ask or deny), the rule that decided, and each part of the
command (every command it runs, every file it writes) with its own verdict and rule. The rules
are the built-in ones, ~/.agents/permissions, <project>/.agents/permissions and --allow/--deny.

  harness permissions check 'echo x > main.go'
  harness permissions check --allow 'write main.go' 'echo x > main.go'
` + plainExitHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("give the command as one quoted argument: harness permissions check 'COMMAND'")
			}
			return nil
		},
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPermissionsCheck(cmd, o, args[0], stdio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Project, "project", "", "project directory (default: the git root of the working directory, else the working directory)")
	stringArrayVar(f, &o.AddDirs, "add-dir", "", "an extra writable directory (repeatable)")
	stringArrayVar(f, &o.Allow, "allow", "", "an --allow PATTERN as for harness run (repeatable)")
	stringArrayVar(f, &o.Deny, "deny", "", "a --deny PATTERN as for harness run (repeatable)")
	f.BoolVar(&o.Yolo, "yolo", false, "decide as with --yolo")
	f.StringVar(&o.Backend, "sandbox", sandbox.BackendAuto, "the sandbox backend the session would use; none: every command asks")
	return cmd
}

func runPermissionsCheck(cmd *cobra.Command, o checkOptions, command string, stdio Stdio) error {
	proj, err := projectRoot(cmd.Context(), o.Project)
	if err != nil {
		return err
	}
	home, _ := os.UserHomeDir()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, AddDirs: o.AddDirs, Home: home})
	if err != nil {
		return err
	}
	gate, err := permission.New(permission.Options{
		Policy:      pol,
		UserFile:    filepath.Join(home, ".agents", "permissions"),
		ProjectFile: filepath.Join(pol.Project(), ".agents", "permissions"),
		Allow:       o.Allow,
		Deny:        o.Deny,
		Yolo:        o.Yolo,
		Unsandboxed: o.Backend == sandbox.BackendNone,
		ReadFile:    app.RulesReader(pol), // what a headless session would take
	})
	if err != nil {
		return err
	}
	d := gate.Decide(permission.Request{Tool: "bash", Command: command})
	out := stdio.Out
	if out == nil {
		out = cmd.OutOrStdout()
	}
	fmt.Fprintf(out, "verdict: %s\nrule:    %s\n", d.Verdict, d.Rule)
	if len(d.Parts) > 0 {
		fmt.Fprintln(out, "parts:")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		for _, p := range d.Parts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Verdict, p.What, p.Rule)
		}
		tw.Flush()
	}
	switch {
	case d.Verdict == permission.Ask && d.Pattern() != "":
		fmt.Fprintf(out, "always:  %s\n", d.Pattern())
	case d.Verdict == permission.Ask:
		fmt.Fprintln(out, "always:  not offered (no rule can cover this command; it asks every time)")
	case d.Verdict == permission.Deny:
		fmt.Fprintf(out, "reason:  %s\n", d.Reason)
	}
	return nil
}
