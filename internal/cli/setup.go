package cli

import (
	"context"
	"os"

	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/pricing"
)

// Session is what the front ends run a conversation on; package app
// assembles it.
type Session = app.Session

// sessionSetup are the choices a front end makes about a session.
type sessionSetup struct {
	Prompter   permission.Prompter // nil: headless
	OnDecision func(permission.Record)
	Approver   extend.Approver // asks about project hooks; nil: headless
	Reserved   []string        // the front end's own slash commands
	// Elicit shows an MCP server's question as a form; nil: declined
	// (headless).
	Elicit func(context.Context, *mcp.Elicitation) (mcp.ElicitAnswer, error)
	// MCPInBackground starts the MCP servers beside the session (the
	// chat), not before it opens.
	MCPInBackground bool
}

// projectRoot resolves --project against the working directory.
func projectRoot(ctx context.Context, flag string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return app.ProjectRoot(ctx, flag, wd)
}

// openSession opens a session for the flags: this is where the process's
// environment, home, working and cache directories are read, and handed
// to app.Open.
func openSession(ctx context.Context, g *globalOptions, stdio Stdio, su sessionSetup) (*Session, error) {
	src, err := config.FromOS(g.configFlags())
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cache, _ := os.UserCacheDir() // none: spill files go to /var/tmp
	s, err := app.Open(ctx, app.Options{
		Source: src, WorkDir: wd, CacheDir: cache,
		Project: g.Project, AddDirs: g.AddDirs, Backend: g.Backend, Timeout: g.Timeout,
		Continue: g.Continue, Resume: g.Resume, MaxSteps: g.MaxSteps,
		Allow: g.Allow, AllowNet: g.AllowNet, Deny: g.Deny, Yolo: g.Yolo,
		Prompter: su.Prompter, OnDecision: su.OnDecision,
		PermissionMode: g.PermissionMode, Settings: g.Settings, AllowProjectHooks: g.AllowProjectHooks,
		HookApprover: su.Approver, ReservedCommands: su.Reserved, Elicit: su.Elicit,
		MCPConfigs: g.MCPConfigs, ApproveMCP: g.ApproveMCP, MCPInBackground: su.MCPInBackground,
		Price: priceFor,
	})
	if err != nil {
		return nil, err
	}
	// A models.json that does not parse is not ignored without a word.
	if _, err := userCatalogue(s.Config.EnvFile); err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Config, err.Error()+"; the built-in catalogue is used until it is fixed (harness models shows it)"))
	}
	return s, nil
}

// priceFor is the model's price per million tokens: the catalogue (with
// ~/.agents/models.json) with the PRICE_* settings on top; ok is false when
// it is unknown. A models.json that does not parse leaves the built-in
// catalogue; harness models names the error.
func priceFor(cfg *config.Config, model string) (llm.Price, bool) {
	cat, err := userCatalogue(cfg.EnvFile)
	if err != nil {
		cat = llm.DefaultCatalogue()
	}
	over := func(v float64) *float64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	return pricing.ForIn(cat, model, pricing.Override{
		Input: over(cfg.PriceInput), Output: over(cfg.PriceOutput),
		CacheRead: over(cfg.PriceCacheRead), CacheWrite: over(cfg.PriceCacheWrite),
	})
}
