package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/termsafe"
)

type undoOptions struct {
	Session string
	Turn    int
	Call    bool
	List    bool
	DryRun  bool
	Force   bool
}

func newUndoCommand(g *globalOptions, stdio Stdio) *cobra.Command {
	o := &undoOptions{}
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Undo the files the agent changed: the last turn, the last call, or back to a turn",
		Long: `Set back what the agent changed in the project, by its file tools and by its shell
commands alike (contents, modes, new and deleted files and directories, symlinks),
with or without git. Works after the session ended and after a crash.

  harness undo              the last turn of the latest session that changed files
  harness undo --call       only the last call that changed files
  harness undo --turn N     every turn from N on: the files as they were before turn N
  harness undo --list       the checkpoints: turn, tool, files changed
  harness undo --dry-run    say what would be restored, change nothing

A file changed after the agent left it (by you, by hand) is not overwritten: it is
named and left alone, and everything else is restored; --force overwrites it too.
Undo works only beneath the project (and the session's other writable roots) and
never through a symlink: a path whose directory became a link is named and left
alone, even with --force.
Files larger than 16 MiB, and trees tools rewrite (node_modules, target, build,
dist, caches, .git) are not kept; undo says which it cannot restore.

EXIT STATUS
  0  restored (or nothing to undo)
  1  a file could not be restored: changed since (see --force), not kept, or
     reachable only through a symlink
  2  usage error
`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUndo(cmd.Context(), g, o, stdio)
		},
	}
	cmd.Flags().StringVar(&g.Project, "project", "", "project directory (default: the git root of the working directory, else the working directory)")
	cmd.Flags().StringVar(&o.Session, "session", "", "the session (id or prefix; default: the latest that changed files)")
	cmd.Flags().IntVar(&o.Turn, "turn", 0, "undo every turn from `N` on")
	cmd.Flags().BoolVar(&o.Call, "call", false, "undo only the last call that changed files")
	cmd.Flags().BoolVar(&o.List, "list", false, "list the checkpoints")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be restored, change nothing")
	cmd.Flags().BoolVar(&o.Force, "force", false, "also overwrite files changed since the agent left them")
	return cmd
}

func runUndo(ctx context.Context, g *globalOptions, o *undoOptions, stdio Stdio) error {
	if o.Turn < 0 {
		return usageError("--turn must be 1 or more")
	}
	if o.Call && o.Turn > 0 {
		return usageError("--call and --turn choose different things to undo: give one")
	}
	dir, _, err := sessionsDir(ctx, g)
	if err != nil {
		return err
	}
	proj, err := projectRoot(ctx, g.Project)
	if err != nil {
		return err
	}
	journal, err := findJournal(filepath.Join(dir, "checkpoints"), o.Session)
	if err != nil {
		return err
	}
	if o.List {
		entries, err := checkpoint.Entries(journal)
		var dmg *checkpoint.DamagedJournalError
		if errors.As(err, &dmg) {
			fmt.Fprintln(stdio.Err, "harness: warning:", err)
		} else if err != nil {
			return err
		}
		if len(entries) == 0 {
			fmt.Fprintln(stdio.Out, "no checkpoint changed any file")
		}
		for _, e := range entries {
			var paths []string
			for _, c := range e.Changes {
				paths = append(paths, termsafe.Line(relTo(proj, c.Path)))
			}
			fmt.Fprintf(stdio.Out, "turn %d  #%d  %s  %s  %s\n", e.Turn, e.Seq, e.Time.Local().Format("15:04:05"), termsafe.Line(e.Tool), strings.Join(paths, ", "))
		}
		return nil
	}
	// Checkpoints record the roots they cover; older ones are confined to
	// the project.
	res, err := checkpoint.Undo(journal, checkpoint.Selection{LastCall: o.Call, FromTurn: o.Turn},
		checkpoint.Options{DryRun: o.DryRun, Force: o.Force, Roots: []string{proj}})
	if err != nil {
		return err
	}
	msg := res.Describe([]string{proj})
	if o.DryRun {
		msg = "dry run: " + strings.Replace(msg, "restored", "would restore", 1)
	}
	fmt.Fprintln(stdio.Out, msg)
	if n := len(res.Conflicts) + len(res.Lost) + len(res.Refused) + len(res.Shared); n > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d file(s) not restored", n)}
	}
	if len(res.Unknown) > 0 {
		return &ExitError{Code: 1, Err: errors.New("some changes were not known to undo (see above)")}
	}
	return nil
}

// findJournal picks a session's checkpoint journal: by id or prefix, or
// the one written last.
func findJournal(dir, id string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	type cand struct {
		path string
		mod  int64
	}
	var cs []cand
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || (id != "" && !strings.HasPrefix(name, id)) {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.Size() == 0 {
			continue
		}
		cs = append(cs, cand{filepath.Join(dir, e.Name()), fi.ModTime().UnixNano()})
	}
	if len(cs) == 0 {
		if id != "" {
			return "", fmt.Errorf("no checkpoints of a session %q in this project; harness undo --list shows the latest's", id)
		}
		return "", fmt.Errorf("no checkpoints in this project: no session has changed a file yet")
	}
	if id != "" && len(cs) > 1 {
		return "", usageError("the id %q names %d sessions: give more of it", id, len(cs))
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].mod > cs[j].mod })
	return cs[0].path, nil
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
