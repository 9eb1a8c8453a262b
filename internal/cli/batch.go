package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/harness-dev/harness/internal/batch"
	"github.com/harness-dev/harness/internal/config"
)

type batchOptions struct {
	Out         string
	Workdir     string
	Jobs        int
	Budget      float64
	TaskTimeout time.Duration
	SummaryJSON bool
	Executor    string
	Image       string
	Network     string
	Emit        string
	Index       string
	KubeName    string
	KubeSecret  string
	KubeMemory  string

	// passed to each harness run
	Model, Provider, BaseURL, Sandbox string
	Allow, Deny                       []string
	Yolo                              bool
	MaxSteps                          int

	// Env is KEY=VALUE settings added to every harness run's environment
	// (an A/B arm's layer settings).
	Env []string
}

func newBatchCommand(stdio Stdio) *cobra.Command {
	o := &batchOptions{}
	cmd := &cobra.Command{
		Use:   "batch [flags] TASKS.jsonl",
		Short: "Run many tasks, each in its own checkout and session",
		Long: `Run the tasks of a JSONL file, each headless in a fresh clone of its repository
with its own session, N at once, and write one result line per task.

A task line:
  {"id": "fix-1", "repo": "path/or/git-url", "ref": "main", "prompt": "…",
   "setup": "npm ci", "check": "go test ./...", "timeout": "20m", "budget_usd": 0.5}

id, repo and prompt are required. setup runs on the host before the agent (it is
your command and may need the network); the check runs inside the sandbox after
the agent, and its exit status decides solved (0) or failed. Each result line has
the status, steps, usage, cost, the final answer, the diff against the ref, the
check's exit status and output, the session id and the workspace.

Interrupting (Ctrl-C) stops the running tasks, keeps what finished, and running
the same command again runs only what is unfinished. --budget bounds the whole
batch, earlier runs included: no new task starts once it is spent, and running
tasks share what is left.

Tasks run headless, where nothing can be approved: give --yolo (the sandbox stays
on) or --allow rules so the agent can edit files and run commands.

--emit kubernetes prints an Indexed Job (a completion index per task) and a
ConfigMap holding the task file; each pod runs "harness batch --index I --out -"
in --image with the settings of a Secret (kubectl create secret generic
harness-model --from-env-file ~/.agents/env) and prints its result line, which
"harness batch collect TASKS.jsonl LOGS..." merges from the pods' logs.

--executor docker runs each task in a container of its own (--image, or
$HARNESS_IMAGE: any image with sh, git and the project's toolchain; the harness
binary is mounted in): all capabilities dropped, a read-only root, pids and
memory limits, and harness's own walls around every command inside.
` + exitStatusHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("give one task file: harness batch TASKS.jsonl")
			}
			return nil
		},
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatch(cmd.Context(), o, args[0], stdio)
		},
	}
	cmd.AddCommand(newBatchCollectCommand(stdio), newBatchABCommand(stdio))
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "", "results file, appended to and read back on a re-run (default: TASKS.results.jsonl)")
	f.StringVar(&o.Workdir, "workdir", "", "where the tasks' checkouts go (default: TASKS.work beside the results)")
	o.taskFlags(cmd, "total USD at list price for the batch, earlier runs included (0: none)", "print the summary as one JSON object on stdout")
	f.StringVar(&o.Emit, "emit", "", "print the batch as manifests instead of running it: kubernetes")
	f.StringVar(&o.Index, "index", "", "run only the task at this 0-based index (a Kubernetes completion index)")
	f.StringVar(&o.KubeName, "kube-name", "harness-batch", "kubernetes: the Job's and ConfigMap's name")
	f.StringVar(&o.KubeSecret, "kube-secret", "harness-model", "kubernetes: the Secret holding the model settings")
	f.StringVar(&o.KubeMemory, "kube-memory", "4Gi", "kubernetes: memory limit per pod")
	return cmd
}

// taskFlags are the flags of how tasks run, shared by batch and batch ab.
func (o *batchOptions) taskFlags(cmd *cobra.Command, budgetHelp, summaryHelp string) {
	f := cmd.Flags()
	f.IntVarP(&o.Jobs, "jobs", "j", 2, "tasks at once")
	f.Float64Var(&o.Budget, "budget", 0, budgetHelp)
	f.DurationVar(&o.TaskTimeout, "task-timeout", 30*time.Minute, "a task's time limit when it sets none")
	f.BoolVar(&o.SummaryJSON, "summary-json", false, summaryHelp)
	f.StringVar(&o.Executor, "executor", "local", "where tasks run: local (a process each) or docker (a container each)")
	f.StringVar(&o.Image, "image", os.Getenv("HARNESS_IMAGE"), "docker: the image tasks run in (default $HARNESS_IMAGE)")
	f.StringVar(&o.Network, "docker-network", "bridge", "docker: the container's network mode, so the agent reaches the model (host for a model on this machine's loopback)")
	f.StringVar(&o.Model, "model", "", "model name for every task (overrides MODEL)")
	f.StringVar(&o.Provider, "provider", "", "wire format: anthropic or openai (overrides PROVIDER)")
	f.StringVar(&o.BaseURL, "base-url", "", "provider endpoint (overrides BASE_URL)")
	f.StringVar(&o.Sandbox, "sandbox", "", "sandbox backend for every task")
	stringArrayVar(f, &o.Allow, "allow", "", "allow tool calls matching PATTERN (repeatable)")
	stringArrayVar(f, &o.Deny, "deny", "", "deny tool calls matching PATTERN (repeatable)")
	f.BoolVar(&o.Yolo, "yolo", false, "allow every call that no rule denies (the sandbox stays on)")
	f.IntVar(&o.MaxSteps, "max-steps", 0, "model calls per task before stopping")
}

// checkTaskFlags refuses what taskFlags cannot take.
func (o *batchOptions) checkTaskFlags() error {
	if o.Jobs < 1 {
		return usageError("--jobs must be at least 1")
	}
	if o.Budget < 0 {
		return usageError("--budget cannot be negative")
	}
	return nil
}

// readTaskFile reads and checks a task file; a bad line is a usage error.
func readTaskFile(path string) ([]batch.Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the task file: %w", err)
	}
	defer f.Close()
	tasks, err := batch.ReadTasks(f)
	if err != nil {
		var te *batch.TaskError
		if errors.As(err, &te) {
			return nil, usageError("%s: %v", path, err)
		}
		return nil, err
	}
	return tasks, nil
}

// runArgs are the harness run flags every task gets.
func (o *batchOptions) runArgs() []string {
	var a []string
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	add("--model", o.Model)
	add("--provider", o.Provider)
	add("--base-url", o.BaseURL)
	add("--sandbox", o.Sandbox)
	for _, p := range o.Allow {
		add("--allow", p)
	}
	for _, p := range o.Deny {
		add("--deny", p)
	}
	if o.Yolo {
		a = append(a, "--yolo")
	}
	if o.MaxSteps > 0 {
		add("--max-steps", strconv.Itoa(o.MaxSteps))
	}
	return a
}

func runBatch(ctx context.Context, o *batchOptions, taskFile string, stdio Stdio) error {
	if err := o.checkTaskFlags(); err != nil {
		return err
	}
	tasks, err := readTaskFile(taskFile)
	if err != nil {
		return err
	}
	if o.Emit != "" {
		if o.Emit != "kubernetes" {
			return usageError("--emit takes kubernetes, not %q", o.Emit)
		}
		raw, err := os.ReadFile(taskFile)
		if err != nil {
			return err
		}
		k := batch.KubeJob{Name: o.KubeName, Image: o.Image, Secret: o.KubeSecret, Jobs: o.Jobs, RunArgs: o.runArgs(), Memory: o.KubeMemory}
		y, err := k.Manifests(tasks, raw)
		if err != nil {
			return usageError("%v", err)
		}
		_, err = stdio.Out.Write(y)
		return err
	}
	if o.Index != "" {
		i, err := batch.ParseIndex(o.Index, len(tasks))
		if err != nil {
			return usageError("--index: %v", err)
		}
		tasks = tasks[i : i+1]
	}
	base := strings.TrimSuffix(taskFile, filepath.Ext(taskFile))
	if o.Out == "-" {
		// Results to standard output (a pod's log), nothing read back.
		if o.Workdir == "" {
			o.Workdir = base + ".work"
		}
		return runBatchTasks(ctx, o, tasks, nil, stdio.Out, stdio)
	}
	if o.Out == "" {
		o.Out = base + ".results.jsonl"
	}
	if o.Workdir == "" {
		o.Workdir = strings.TrimSuffix(o.Out, filepath.Ext(o.Out)) + ".work"
	}
	prev, out, err := openResults(o.Out)
	if err != nil {
		return err
	}
	defer out.Close()
	return runBatchTasks(ctx, o, tasks, prev, out, stdio)
}

// runBatchTasks runs what prev does not have finished, results to out.
func runBatchTasks(ctx context.Context, o *batchOptions, tasks []batch.Task, prev map[string]batch.Result, out io.Writer, stdio Stdio) error {
	workdir, err := filepath.Abs(o.Workdir)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the harness binary: %w", err)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }()

	var ex batch.Executor
	local := batch.Local{Harness: exe, Root: workdir, Args: o.runArgs()}
	if len(o.Env) > 0 {
		local.Env = append(os.Environ(), o.Env...)
	}
	switch o.Executor {
	case "local":
		ex = &local
	case "docker":
		if o.Image == "" {
			return usageError("--executor docker needs an image: --image NAME or HARNESS_IMAGE")
		}
		d := &batch.Docker{Local: local, Image: o.Image, Network: o.Network, Env: settingsEnv(append(os.Environ(), o.Env...))}
		if home, err := os.UserHomeDir(); err == nil {
			d.EnvFile = filepath.Join(home, ".agents", "env")
		}
		if err := d.Connect(ctx); err != nil {
			return err
		}
		ex = d
	default:
		return usageError("--executor must be local or docker, not %q", o.Executor)
	}
	prog := newBatchProgress(stdio.Err, len(tasks))
	r := &batch.Runner{
		Exec:      ex,
		Jobs:      o.Jobs,
		BudgetUSD: o.Budget,
		Timeout:   o.TaskTimeout,
		Results:   out,
		OnStart:   prog.start,
		OnResult:  prog.result,
	}
	done := 0
	for _, t := range tasks {
		if res, ok := prev[t.ID]; ok && res.Status.Final() {
			done++
		}
	}
	if done > 0 {
		fmt.Fprintf(stdio.Err, "harness: %d of %d task(s) already finished in %s; running the rest\n", done, len(tasks), o.Out)
	}
	prog.finished = done
	all, runErr := r.Run(ctx, tasks, prev)
	prog.end()
	sum := batch.Summarize(tasks, all)
	if o.SummaryJSON {
		enc := json.NewEncoder(stdio.Out)
		_ = enc.Encode(struct {
			batch.Summary
			P50 float64 `json:"p50_s"`
			P95 float64 `json:"p95_s"`
		}{sum, sum.P50, sum.P95})
	}
	sum.WriteTable(stdio.Err)
	if o.Out != "-" {
		fmt.Fprintf(stdio.Err, "results: %s · checkouts: %s\n", o.Out, workdir)
	}
	switch {
	case errors.Is(runErr, context.Canceled):
		fmt.Fprintln(stdio.Err, "harness: interrupted; run the same command again to finish the rest")
		return &ExitError{Code: exitInterrupted}
	case runErr != nil:
		return runErr
	case sum.Unfinished > 0:
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%d task(s) unfinished (budget spent or interrupted)", sum.Unfinished)}
	}
	return nil
}

func newBatchCollectCommand(stdio Stdio) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "collect [--out FILE] TASKS.jsonl LOG...",
		Short: "Merge result lines from pods' logs into the results file",
		Long: `Read the result lines that "harness batch --index I --out -" printed (for
example each pod's "kubectl logs" saved to a file, or all of them in one), keep
those of the task file's tasks, append them to the results file and print the
summary. Other lines in the logs are ignored.
` + plainExitHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("give the task file and at least one log: harness batch collect TASKS.jsonl LOG...")
			}
			return nil
		},
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBatchCollect(args[0], args[1:], out, stdio)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "results file (default: TASKS.results.jsonl)")
	return cmd
}

func runBatchCollect(taskFile string, logs []string, outPath string, stdio Stdio) error {
	f, err := os.Open(taskFile)
	if err != nil {
		return fmt.Errorf("opening the task file: %w", err)
	}
	tasks, err := batch.ReadTasks(f)
	f.Close()
	if err != nil {
		return usageError("%s: %v", taskFile, err)
	}
	if outPath == "" {
		outPath = strings.TrimSuffix(taskFile, filepath.Ext(taskFile)) + ".results.jsonl"
	}
	known := map[string]bool{}
	for _, t := range tasks {
		known[t.ID] = true
	}
	all := map[string]batch.Result{}
	if b, err := os.Open(outPath); err == nil {
		all, err = batch.ReadResults(b)
		b.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", outPath, err)
		}
	}
	found := map[string]batch.Result{}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			var r batch.Result
			if json.Unmarshal([]byte(strings.TrimSpace(line)), &r) == nil && known[r.ID] && r.Status != "" {
				found[r.ID] = r
			}
		}
	}
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	for _, t := range tasks {
		if r, ok := found[t.ID]; ok {
			b, _ := json.Marshal(r)
			if _, err := out.Write(append(b, '\n')); err != nil {
				return fmt.Errorf("writing %s: %w", outPath, err)
			}
			all[r.ID] = r
		}
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", outPath, err)
	}
	fmt.Fprintf(stdio.Err, "harness: %d result(s) found in %d log(s)\n", len(found), len(logs))
	sum := batch.Summarize(tasks, all)
	sum.WriteTable(stdio.Err)
	if sum.Unfinished > 0 {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("%d task(s) have no final result yet", sum.Unfinished)}
	}
	return nil
}

// settingsEnv picks from env the settings a harness inside a container
// needs (model, provider, endpoint, key, prices, limits): the
// configuration keys, which all are upper-case names without lower-case
// letters, and nothing else of this process's environment.
func settingsEnv(env []string) []string {
	keys := map[string]bool{}
	for _, k := range []string{"PROVIDER", "MODEL", "BASE_URL", "API_KEY", "OPENAI_PROFILE",
		"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY",
		"CONTEXT_WINDOW", "COMPACT_AT", "COMPACT_TO", "MAX_TOKENS", "THINKING", "EFFORT", "WIRE_API", "RESPONSES_STORE",
		"PRICE_INPUT", "PRICE_OUTPUT", "PRICE_CACHE_READ", "PRICE_CACHE_WRITE", "NO_COLOR"} {
		keys[k] = true
	}
	for _, k := range config.LayerKeys {
		keys[k] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && keys[k] {
			out = append(out, kv)
		}
	}
	return out
}

// batchProgress shows a bar on a terminal and a line per result elsewhere.
type batchProgress struct {
	w        io.Writer
	tty      bool
	total    int
	finished int
	solved   int
	cost     float64
	running  map[string]bool
	mu       sync.Mutex
}

func newBatchProgress(w io.Writer, total int) *batchProgress {
	p := &batchProgress{w: w, total: total, running: map[string]bool{}}
	tw := w
	if g, ok := tw.(interface{ Unwrap() io.Writer }); ok {
		tw = g.Unwrap()
	}
	if f, ok := tw.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *batchProgress) start(t batch.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[t.ID] = true
	p.draw()
}

func (p *batchProgress) result(r batch.Result, finished, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, r.ID)
	p.finished = finished
	if r.Status == batch.Solved {
		p.solved++
	}
	cost := "cost unknown"
	if r.CostUSD != nil {
		p.cost += *r.CostUSD
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	line := fmt.Sprintf("%-12s %s · %d step(s) · %.1fs · %s", r.Status, r.ID, r.Steps, r.Seconds, cost)
	if r.Error != "" && r.Status != batch.Solved {
		line += " · " + firstLine(r.Error)
	}
	fmt.Fprintln(p.w, line)
	p.draw()
}

func (p *batchProgress) draw() {
	if !p.tty {
		return
	}
	const width = 24
	n := 0
	if p.total > 0 {
		n = p.finished * width / p.total
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d · solved %d · $%.4f · running %d",
		strings.Repeat("#", n), strings.Repeat("-", width-n), p.finished, p.total, p.solved, p.cost, len(p.running))
}

func (p *batchProgress) end() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
