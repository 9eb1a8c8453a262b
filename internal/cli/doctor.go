package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/harness-dev/harness/internal/app"
	sandboxbackend "github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/doors"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/battery"
)

// doctorOptions are the flags of `harness doctor`.
type doctorOptions struct {
	Backend string
}

func newDoctorCommand() *cobra.Command {
	var opts doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor [--sandbox auto|bwrap|landlock|seatbelt|docker|podman]",
		Short: "Say which sandbox is in force and try to escape it",
		Long: `Say which sandbox backend is in force and why, what it cannot hold, then run
the escape battery live: each probe tries one escape (writing outside the
project, to .git or /etc, remounting, reading ~/.ssh, reaching a host socket
or the network, typing into a terminal, outliving a timeout...) and checks
the host afterwards. One line a probe; nothing is left behind.

EXIT STATUS
  0    every probe held
  1    at least one probe escaped, or no sandbox is available
  2    bad usage
`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), opts, Stdio{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVar(&opts.Backend, "backend", sandbox.BackendAuto, "backend to examine: auto, bwrap, landlock, seatbelt, docker or podman")
	cmd.Flags().StringVar(&opts.Backend, "sandbox", sandbox.BackendAuto, "same as --backend")
	return cmd
}

func runDoctor(ctx context.Context, opts doctorOptions, stdio Stdio) error {
	name, reason := sandbox.Detect()
	backend := opts.Backend
	switch {
	case backend == sandbox.BackendNone:
		return usageError("doctor examines a sandbox; --backend none has none")
	case backend == "" || backend == sandbox.BackendAuto:
		if name == "" {
			fmt.Fprintf(stdio.Out, "sandbox: none available (%s)\n", reason)
			return &ExitError{Code: 1, Err: fmt.Errorf("no sandbox backend works here: %srun with --sandbox none and approve every command", installHint())}
		}
		backend = name
		fmt.Fprintf(stdio.Out, "sandbox: %s (auto: %s)\n", backend, reason)
	default:
		fmt.Fprintf(stdio.Out, "sandbox: %s (asked for; auto would pick %q: %s)\n", backend, name, reason)
	}
	for _, l := range sandbox.Limits(backend, sandbox.WithEnv(os.Getenv)) {
		fmt.Fprintf(stdio.Out, "  cannot hold: %s\n", l)
	}
	fmt.Fprintf(stdio.Out, "platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	if runtime.GOOS == "linux" {
		if _, why, err := sandboxbackend.HelperExe(nil); err == nil {
			fmt.Fprintf(stdio.Out, "sandbox helper: %s\n", why)
		}
	}
	escaped, err := battery.Run(ctx, backend, stdio.Out, sandbox.WithEnv(os.Getenv))
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("escape battery: %w", err)}
	}
	if escaped > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d probes escaped the %s sandbox: do not rely on it; %sreport the failing probes", escaped, backend, installHint())}
	}
	if backend == sandbox.BackendBwrap || backend == sandbox.BackendLandlock || sandbox.IsContainer(backend) {
		failed, err := sandbox.ProbeNetwork(ctx, backend, stdio.Out, sandbox.LauncherFromEnv(os.Getenv))
		if err != nil {
			return &ExitError{Code: 1, Err: fmt.Errorf("network probe: %w", err)}
		}
		if failed > 0 {
			return &ExitError{Code: 1, Err: fmt.Errorf("%d network probes failed: commands will not reach allowed hosts through the proxy", failed)}
		}
	}
	// harness's own doors: what it does on the host for commands (undo,
	// settings, modes, what it reads and prints, the rules).
	opened, err := doors.Run(ctx, backend, stdio.Out, sandbox.WithEnv(os.Getenv))
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("doors battery: %w", err)}
	}
	if opened > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of harness's own doors let an attack through: do not rely on this build; report the failing probes", opened)}
	}
	fmt.Fprintln(stdio.Out, "all probes held")
	reportConfig(stdio)
	reportPath(stdio, os.Getenv("PATH"))
	return nil
}

// reportConfig ends doctor with what a first run needs to know next: which
// provider and model harness would use, whether a key is there (never
// shown), or what to set. It does not change the exit status: the sandbox
// is doctor's subject.
func reportConfig(stdio Stdio) {
	src, err := config.FromOS(nil)
	if err != nil {
		fmt.Fprintf(stdio.Out, "config: %v\n", err)
		return
	}
	cfg, err := config.Load(src)
	if err != nil {
		fmt.Fprintf(stdio.Out, "config: %v\n", err)
		return
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stdio.Out, "config: warning: %s\n", w)
	}
	if note := app.DefaultModel(cfg); note != "" {
		fmt.Fprintf(stdio.Out, "config: %s\n", note)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stdio.Out, "config: %v\n", err)
		return
	}
	endpoint, key := cfg.BaseURL, "key set"
	if endpoint == "" {
		endpoint = "the provider's public API"
	}
	if cfg.APIKey == "" {
		key = "no key (a local server)"
	}
	fmt.Fprintf(stdio.Out, "config: %s %s via %s, %s (from %s and the environment); run harness in your project\n", cfg.Provider, cfg.Model, endpoint, key, cfg.EnvFile)
}

// installHint is what to install for a better sandbox: bubblewrap on Linux;
// macOS's sandbox-exec is part of the system.
func installHint() string {
	if runtime.GOOS == "linux" {
		return "install bubblewrap, or "
	}
	return ""
}

// reportPath says so when the harness being run is not the one the shell
// finds by name (after go install, GOPATH/bin is often not on PATH), with
// the line that fixes it.
func reportPath(stdio Stdio, path string) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	exe, _ = filepath.EvalSymlinks(exe)
	for _, dir := range filepath.SplitList(path) {
		found, err := filepath.EvalSymlinks(filepath.Join(dir, "harness"))
		if err == nil && found == exe {
			return
		}
	}
	fmt.Fprintf(stdio.Out, "path: harness is not on your PATH as %s; add its directory: export PATH=\"$PATH:%s\" (in your shell's profile)\n", exe, filepath.Dir(exe))
}
