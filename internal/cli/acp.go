package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/acp"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/notice"
)

func newACPCommand(g *globalOptions, stdio Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Serve an editor over the Agent Client Protocol on stdin and stdout",
		Long: `Run harness as an ACP agent (Agent Client Protocol, version 1): an editor
such as Zed starts it and speaks JSON-RPC on its stdin and stdout.

Each session's project is found from the cwd the editor sends, whatever
directory harness was started in. Commands run in harness's sandbox, as in
the terminal; edits go through harness's file tools, so harness undo covers
them; what harness would ask about is asked in the editor. stdout carries
the protocol alone; notices go to stderr.

The agent flags (--sandbox, --allow, --allow-net, --add-dir, --model...)
apply to every session the editor opens.

EXIT STATUS
  0  the editor closed stdin, or SIGINT or SIGTERM ended harness; every
     session is saved and closed (continue one with session/load or
     harness --resume ID)
  1  reading stdin or writing stdout failed
  2  usage error
`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runACP(cmd.Context(), g, stdio)
		},
	}
	g.register(cmd)
	return cmd
}

// runACP serves one editor on stdio until it closes stdin or a signal
// comes; every session is closed on the way out.
func runACP(ctx context.Context, g *globalOptions, stdio Stdio) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &acp.Server{
		Log:     stdio.Err,
		Version: version(),
		Open: func(ctx context.Context, r acp.OpenRequest) (*app.Session, error) {
			return openACPSession(ctx, g, r)
		},
	}
	return srv.Serve(ctx, stdio.stdin(), stdio.Out)
}

// openACPSession opens a session as openSession does, with the project
// found from the editor's cwd and the editor's MCP servers added as an
// --mcp-config file would add them.
func openACPSession(ctx context.Context, g *globalOptions, r acp.OpenRequest) (*app.Session, error) {
	src, err := config.FromOS(g.configFlags())
	if err != nil {
		return nil, err
	}
	cache, _ := os.UserCacheDir()
	mcpConfigs := append([]string(nil), g.MCPConfigs...)
	if len(r.MCPServers) > 0 {
		b, err := acp.MCPConfig(r.MCPServers)
		if err != nil {
			return nil, fmt.Errorf("the editor's MCP servers: %w", err)
		}
		// A private directory of the user's, out of the sandbox's reach,
		// read once while the session opens.
		dir, err := os.MkdirTemp("", "harness-acp-")
		if err != nil {
			return nil, fmt.Errorf("passing the editor's MCP servers: %w", err)
		}
		defer os.RemoveAll(dir)
		f := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(f, b, 0o600); err != nil {
			return nil, fmt.Errorf("passing the editor's MCP servers: %w", err)
		}
		mcpConfigs = append(mcpConfigs, f)
	}
	resume := r.Resume
	s, err := app.Open(ctx, app.Options{
		Source: src, WorkDir: r.Cwd, CacheDir: cache,
		Project: g.Project, AddDirs: g.AddDirs, Backend: g.Backend, Timeout: g.Timeout,
		Resume: resume, MaxSteps: g.MaxSteps,
		Allow: g.Allow, AllowNet: g.AllowNet, Deny: g.Deny, Yolo: g.Yolo,
		Prompter:       r.Prompter,
		PermissionMode: g.PermissionMode, Settings: g.Settings, AllowProjectHooks: g.AllowProjectHooks,
		ReservedCommands: nil,
		MCPConfigs:       mcpConfigs, ApproveMCP: g.ApproveMCP,
		Price: priceFor,
	})
	if err != nil {
		return nil, err
	}
	if _, err := userCatalogue(s.Config.EnvFile); err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Config, err.Error()+"; the built-in catalogue is used until it is fixed (harness models shows it)"))
	}
	return s, nil
}
