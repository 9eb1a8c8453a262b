package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/harness-dev/harness/internal/gitsafe"
)

// Local runs each task in its own clone under Root with its own harness
// process on this machine.
type Local struct {
	Harness      string        // the harness binary (os.Executable() for the running one)
	Root         string        // workspaces go to Root/<task id>
	Args         []string      // more `harness run` flags: --yolo, --allow …, --model …
	Env          []string      // the harness processes' environment; nil: this process's
	CheckTimeout time.Duration // for setup, the diff and the check; zero: 10 minutes
}

// diffScript prints what the agent changed against BASE, new files
// included, without touching the checkout's index: it works on a copy in
// the sandbox's own temporary directory. External diff drivers and
// textconv are off, so no configuration in the checkout runs a program.
var diffScript = `set -e
GIT_INDEX_FILE=$(mktemp)
export GIT_INDEX_FILE
cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
` + gitsafe.Shell("add", "-A") + `
` + gitsafe.Shell("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-color") + ` "$1"
rm -f "$GIT_INDEX_FILE"
`

// maxLog bounds what a result keeps of a command's output: the tail,
// where the failures are.
const maxLog = 16 << 10

func (l *Local) Run(ctx context.Context, t Task, lim Limits) Result {
	return l.run(ctx, t, lim, hostMachine{env: l.Env}, l.Harness, l.Args)
}

// machine is where a task's commands run: this host, or a container.
type machine interface {
	// exec runs argv in dir and returns its exit code; err means it could
	// not run. Cancelling ctx interrupts it (SIGINT) and kills it if it has
	// not ended after a grace period.
	exec(ctx context.Context, argv []string, dir string, stdout, stderr io.Writer) (int, error)
}

// run is a task's life, wherever its commands run: checkout (on the host,
// into Root), setup, the agent, the diff and the check (inside the walls).
func (l *Local) run(ctx context.Context, t Task, lim Limits, m machine, harness string, runArgs []string) Result {
	start := time.Now()
	ws := filepath.Join(l.Root, t.ID)
	res := Result{ID: t.ID, Workspace: ws}
	done := func(st Status, err error) Result {
		res.Status = st
		if err != nil {
			res.Error = err.Error()
		}
		res.Seconds = time.Since(start).Seconds()
		return res
	}
	if ctx.Err() != nil {
		return done(Interrupted, ctx.Err())
	}
	base, err := l.checkout(ctx, t, ws)
	if err != nil {
		if ctx.Err() != nil {
			return done(Interrupted, err)
		}
		return done(SetupFailed, err)
	}
	if t.Setup != "" {
		out, code, err := l.shell(ctx, m, ws, t.Setup)
		if err != nil || code != 0 {
			if ctx.Err() != nil {
				return done(Interrupted, ctx.Err())
			}
			return done(SetupFailed, fmt.Errorf("setup exited %d: %s", code, tail(out, 2000)))
		}
	}

	st, agentErr := l.agent(ctx, m, harness, runArgs, t, ws, lim, &res)
	if st == Interrupted {
		return done(st, agentErr)
	}
	// What the agent changed, read inside the walls.
	if out, code, err := l.sandboxed(context.WithoutCancel(ctx), m, harness, ws, diffScript, base); err == nil && code == 0 {
		res.Diff = string(out)
	} else if agentErr == nil {
		agentErr = fmt.Errorf("could not read the diff (exit %d): %s", code, tail(out, 500))
	}
	if st != Done {
		return done(st, agentErr)
	}
	if t.Check == "" {
		return done(Done, agentErr)
	}
	out, code, err := l.sandboxed(ctx, m, harness, ws, t.Check)
	switch {
	case ctx.Err() != nil:
		return done(Interrupted, ctx.Err())
	case err != nil:
		return done(AgentError, fmt.Errorf("running the check: %w", err))
	}
	res.CheckExit, res.CheckLog = &code, tail(out, maxLog)
	if code == 0 {
		return done(Solved, agentErr)
	}
	return done(Failed, agentErr)
}

func (l *Local) checkTimeout() time.Duration {
	if l.CheckTimeout > 0 {
		return l.CheckTimeout
	}
	return 10 * time.Minute
}

// checkout makes a fresh clone of the task's repository at its ref on a
// branch of its own and returns the commit the agent starts from. The
// clone copies objects rather than hard-linking them: objects are
// writable inside the walls, and a hard link would let the agent rewrite
// the source repository's.
func (l *Local) checkout(ctx context.Context, t Task, ws string) (string, error) {
	if err := os.RemoveAll(ws); err != nil {
		return "", fmt.Errorf("clearing the old workspace: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		return "", err
	}
	repo := t.Repo
	if !strings.Contains(repo, "://") && !strings.Contains(repo, "@") {
		if abs, err := filepath.Abs(repo); err == nil {
			repo = abs
		}
	}
	// The clone is of the user's own repository before any agent has
	// touched it, so the user's configuration stays (credential helpers,
	// url rewrites a private remote needs); gitsafe's options still turn
	// off every program a repository can name.
	git := func(dir string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), gitsafe.Args...), args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, tail(out, 1000))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := git(filepath.Dir(ws), "clone", "--quiet", "--no-hardlinks", "--", repo, ws); err != nil {
		return "", err
	}
	if t.Ref != "" {
		if _, err := git(ws, "checkout", "--quiet", t.Ref, "--"); err != nil {
			return "", err
		}
	}
	if _, err := git(ws, "checkout", "--quiet", "-B", "batch/"+t.ID); err != nil {
		return "", err
	}
	return git(ws, "rev-parse", "HEAD")
}

// agent runs `harness run` on the task and fills res from its stream.
func (l *Local) agent(ctx context.Context, m machine, harness string, runArgs []string, t Task, ws string, lim Limits, res *Result) (Status, error) {
	args := []string{harness, "run", "--project", ws, "--output-format", "stream-json"}
	if lim.BudgetUSD > 0 {
		args = append(args, "--max-cost", strconv.FormatFloat(lim.BudgetUSD, 'f', -1, 64))
	}
	args = append(args, runArgs...)
	args = append(args, "-p", t.Prompt)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if lim.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, lim.Timeout)
	}
	defer cancel()
	var stderr bytes.Buffer
	pr, pw := io.Pipe()
	var final *runResult
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
		for sc.Scan() {
			var ev runResult
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			switch ev.Type {
			case "system":
				res.SessionID = ev.SessionID
			case "result":
				final = &ev
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	_, runErr := m.exec(runCtx, args, ws, pw, &limitedTail{buf: &stderr, max: maxLog})
	pw.Close()
	<-scanned

	if final != nil {
		res.SessionID = final.SessionID
		res.Steps, res.Usage, res.CostUSD, res.Answer = final.Steps, final.Usage, final.CostUSD, final.Result
	}
	switch {
	case ctx.Err() != nil:
		return Interrupted, errors.New("the batch was interrupted; this task runs again next time")
	case runCtx.Err() != nil:
		return TimedOut, fmt.Errorf("the agent ran past the task's timeout of %s", lim.Timeout)
	case final == nil:
		return AgentError, fmt.Errorf("harness run ended without a result (%v): %s", runErr, tail(stderr.Bytes(), 1000))
	case !final.IsError:
		return Done, nil
	case final.Reason == "budget":
		return OverBudget, errors.New(final.Error)
	default:
		return AgentError, errors.New(final.Error)
	}
}

// runResult is what harness run's stream-json lines carry that a batch
// keeps (the system line and the result line).
type runResult struct {
	Type      string   `json:"type"`
	SessionID string   `json:"session_id"`
	Result    string   `json:"result"`
	Steps     int      `json:"steps"`
	Usage     Usage    `json:"usage"`
	CostUSD   *float64 `json:"cost_usd"`
	IsError   bool     `json:"is_error"`
	Reason    string   `json:"reason"`
	Error     string   `json:"error"`
}

// sandboxed runs script (sh -c, with args as $1…) inside the project's
// walls through `harness sandbox`, returning its combined output.
func (l *Local) sandboxed(ctx context.Context, m machine, harness, ws, script string, args ...string) ([]byte, int, error) {
	argv := append([]string{harness, "sandbox", "--project", ws, "--timeout", l.checkTimeout().String(), "--", "sh", "-c", script, "sh"}, args...)
	return combined(ctx, m, argv, ws, 0)
}

// shell runs the task's own setup command, outside the walls.
func (l *Local) shell(ctx context.Context, m machine, ws, script string) ([]byte, int, error) {
	return combined(ctx, m, []string{"sh", "-c", script}, ws, l.checkTimeout())
}

func combined(ctx context.Context, m machine, argv []string, dir string, timeout time.Duration) ([]byte, int, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var out bytes.Buffer
	w := &limitedTail{buf: &out, max: 4 * maxLog}
	code, err := m.exec(ctx, argv, dir, w, w)
	return out.Bytes(), code, err
}

// hostMachine runs commands on this machine.
type hostMachine struct{ env []string }

func (h hostMachine) exec(ctx context.Context, argv []string, dir string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, h.env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Stopping is an interrupt: harness saves the session, writes its
	// result and cleans up; only if it does not within the delay is it
	// killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = interruptGrace
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// interruptGrace is how long an interrupted command has to end by itself.
const interruptGrace = 20 * time.Second

// limitedTail keeps the last max bytes written (roughly: it trims in
// halves, so it holds between max/2 and max).
type limitedTail struct {
	buf *bytes.Buffer
	max int
}

func (w *limitedTail) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if w.buf.Len() > w.max {
		keep := w.buf.Bytes()[w.buf.Len()-w.max/2:]
		b := append([]byte(nil), keep...)
		w.buf.Reset()
		w.buf.Write(b)
	}
	return len(p), nil
}

// tail returns the last n bytes of b as text, marked when cut.
func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
