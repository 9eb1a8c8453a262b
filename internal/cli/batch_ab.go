package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/batch"
	"github.com/harness-dev/harness/internal/config"
)

// batchABOptions are the flags of harness batch ab.
type batchABOptions struct {
	batchOptions
	A, B []string // KEY=VALUE layer settings of each arm
	Dir  string
}

func newBatchABCommand(stdio Stdio) *cobra.Command {
	o := &batchABOptions{}
	cmd := &cobra.Command{
		Use:   "ab [flags] --b KEY=VALUE... TASKS.jsonl",
		Short: "Run the same tasks under two context-layer settings and compare",
		Long: `Run every task of TASKS.jsonl twice, as harness batch does, once per arm: arm A
with the settings of --a (none: the defaults) and arm B with those of --b, and
print how they compare: solve rate by the tasks' checks (tasks without a check
and unfinished tasks count in neither), mean steps per finished task, the
arm's cost at list price and dollars per solved task, then the tasks solved in
one arm only.

A setting is KEY=VALUE as in ~/.agents/env, one of the context layers':
` + strings.Join(config.LayerKeys, ", ") + `. It is added to the environment
of each task's harness run, so it wins over ~/.agents/env.

Each arm has its own results file and checkouts (TASKS.ab-A.results.jsonl,
TASKS.ab-A.work, and the same for B, or under --dir); running the same
command again finishes what is unfinished in either arm and compares again.
--budget bounds each arm. --summary-json prints the comparison as one JSON
object on stdout.

Example: is trimming old assistant text worth it on these tasks?
  harness batch ab --yolo --b TRIM_OLD_TEXT=on tasks.jsonl
` + exitStatusHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("give one task file: harness batch ab --b KEY=VALUE TASKS.jsonl")
			}
			return nil
		},
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatchAB(cmd.Context(), o, args[0], stdio)
		},
	}
	f := cmd.Flags()
	stringArrayVar(f, &o.A, "a", "", "a setting of arm A, KEY=VALUE (repeatable; none: the defaults)")
	stringArrayVar(f, &o.B, "b", "", "a setting of arm B, KEY=VALUE (repeatable)")
	f.StringVar(&o.Dir, "dir", "", "where the arms' results and checkouts go (default: beside TASKS)")
	o.taskFlags(cmd, "USD at list price for each arm, earlier runs included (0: none)", "print the comparison as one JSON object on stdout")
	return cmd
}

// armSettings checks an arm's settings: known layer keys, each once, and
// values the configuration accepts.
func armSettings(name string, kvs []string) ([]string, error) {
	seen := map[string]bool{}
	env := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains(config.LayerKeys, k) {
			return nil, usageError("--%s %q: give KEY=VALUE with KEY one of %s", strings.ToLower(name), kv, strings.Join(config.LayerKeys, ", "))
		}
		if seen[k] {
			return nil, usageError("--%s sets %s twice", strings.ToLower(name), k)
		}
		seen[k] = true
		env[k] = v
	}
	// The configuration's own checks, with no env file to read.
	home := filepath.Join(os.TempDir(), "harness-ab-no-home")
	if _, err := config.Load(config.Source{Home: home, Env: env}); err != nil {
		msg := strings.ReplaceAll(err.Error(), config.EnvPath(home), "--"+strings.ToLower(name))
		return nil, usageError("arm %s: %s", name, msg)
	}
	return kvs, nil
}

func runBatchAB(ctx context.Context, o *batchABOptions, taskFile string, stdio Stdio) error {
	if err := o.checkTaskFlags(); err != nil {
		return err
	}
	a, err := armSettings("A", o.A)
	if err != nil {
		return err
	}
	b, err := armSettings("B", o.B)
	if err != nil {
		return err
	}
	if len(b) == 0 && len(a) == 0 {
		return usageError("the arms are the same: give --b (and --a) settings, such as --b TRIM_OLD_TEXT=on")
	}
	tasks, err := readTaskFile(taskFile)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(taskFile, filepath.Ext(taskFile))
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return err
		}
		base = filepath.Join(o.Dir, filepath.Base(base))
	}
	arms := []batch.Arm{{Name: "A", Settings: a}, {Name: "B", Settings: b}}
	var unfinished error
	for i := range arms {
		arm := &arms[i]
		ao := o.batchOptions
		ao.Env = arm.Settings
		ao.SummaryJSON = false
		ao.Out = base + ".ab-" + arm.Name + ".results.jsonl"
		ao.Workdir = base + ".ab-" + arm.Name + ".work"
		fmt.Fprintf(stdio.Err, "harness: arm %s (%s)\n", arm.Name, settingsText(arm.Settings))
		prev, out, err := openResults(ao.Out)
		if err != nil {
			return err
		}
		err = runBatchTasks(ctx, &ao, tasks, prev, out, stdio)
		out.Close()
		var ee *ExitError
		switch {
		case errors.As(err, &ee) && ee.Code == exitInterrupted:
			return err
		case errors.As(err, &ee) && ee.Code == exitFailure:
			unfinished = err // budget spent: compare what finished
		case err != nil:
			return err
		}
		if arm.Results, err = readResults(ao.Out); err != nil {
			return err
		}
	}
	rep := batch.CompareAB(tasks, arms[0], arms[1])
	fmt.Fprintln(stdio.Err)
	if err := rep.WriteTable(stdio.Err); err != nil {
		return err
	}
	if o.SummaryJSON {
		if err := json.NewEncoder(stdio.Out).Encode(rep); err != nil {
			return err
		}
	}
	return unfinished
}

func settingsText(s []string) string {
	if len(s) == 0 {
		return "defaults"
	}
	return strings.Join(s, " ")
}

// readResults reads a results file; none yet is no results.
func readResults(path string) (map[string]batch.Result, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]batch.Result{}, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := batch.ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// openResults reads a results file and opens it for appending.
func openResults(path string) (map[string]batch.Result, *os.File, error) {
	prev, err := readResults(path)
	if err != nil {
		return nil, nil, err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the results file: %w", err)
	}
	return prev, out, nil
}
