package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/spf13/cobra"
)

// newCacheCommand is `harness cache`: the per-project build caches the
// sandbox keeps, their sizes, and how to remove them.
func newCacheCommand(stdio Stdio) *cobra.Command {
	var project string
	var all bool
	cmd := &cobra.Command{
		Use:   "cache [clean [--project DIR | --all]]",
		Short: "Show or clean the build caches kept for sandboxed commands",
		Long: `Commands in the sandbox keep their build caches (Go's build and module caches, npm, pip,
cargo, and variables named in HARNESS_CACHE_VARS) in a directory per project under
~/.cache/harness/projects/. Only that project's sessions can write it, and no tool on your
machine uses it, so nothing the agent puts there reaches a build outside the walls.

"harness cache" lists every project's cache and its size; "harness cache clean" removes the
current project's (or --project DIR's), "harness cache clean --all" every one.
` + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCache(cmd.Context(), stdio)
		},
	}
	clean := &cobra.Command{
		Use:          "clean [--project DIR | --all]",
		Short:        "Remove a project's build cache (or every one)",
		Long:         "Remove the current project's build cache (or --project DIR's), or with --all every one.\n" + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCacheClean(cmd.Context(), cacheCleanOptions{Project: project, All: all}, stdio)
		},
	}
	clean.Flags().StringVar(&project, "project", "", "the project whose cache to remove (default: the current one)")
	clean.Flags().BoolVar(&all, "all", false, "remove every project's cache")
	cmd.AddCommand(clean)
	return cmd
}

// cacheRoot is where the sandbox keeps per-project build caches.
func cacheRoot() (string, error) {
	home, _ := os.UserHomeDir()
	root := walls.CacheRoot(home, os.Environ())
	if root == "" {
		return "", fmt.Errorf("no home directory or XDG_CACHE_HOME: harness keeps no build caches")
	}
	return filepath.Clean(root), nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// runCache lists every project's build cache and its size.
func runCache(_ context.Context, stdio Stdio) error {
	root, err := cacheRoot()
	if err != nil {
		return err
	}
	list, err := walls.ListCaches(root)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(stdio.Out, "no build caches under %s\n", root)
		return nil
	}
	var total int64
	for _, c := range list {
		name := c.Project
		if name == "" {
			name = "(unknown project)"
		}
		fmt.Fprintf(stdio.Out, "%9s  %6d files  %s\n           %s\n", humanBytes(c.Bytes), c.Files, name, c.Dir)
		total += c.Bytes
	}
	fmt.Fprintf(stdio.Out, "%9s  in all; harness cache clean [--project DIR | --all] removes them\n", humanBytes(total))
	return nil
}

// cacheCleanOptions are harness cache clean's flags.
type cacheCleanOptions struct {
	Project string // the project whose cache to remove ("": the current one)
	All     bool   // every project's
}

// runCacheClean removes one project's build cache, or with All every one.
func runCacheClean(ctx context.Context, o cacheCleanOptions, stdio Stdio) error {
	root, err := cacheRoot()
	if err != nil {
		return err
	}
	var dirs []string
	if o.All {
		list, err := walls.ListCaches(root)
		if err != nil {
			return err
		}
		for _, c := range list {
			dirs = append(dirs, c.Dir)
		}
	} else {
		proj, err := projectRoot(ctx, o.Project)
		if err != nil {
			return err
		}
		dirs = append(dirs, walls.ProjectCache(root, proj))
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			fmt.Fprintf(stdio.Out, "no build cache at %s\n", d)
			continue
		}
		if err := walls.CleanCache(root, d); err != nil {
			return fmt.Errorf("removing %s: %w", d, err)
		}
		fmt.Fprintf(stdio.Out, "removed %s\n", d)
	}
	return nil
}
