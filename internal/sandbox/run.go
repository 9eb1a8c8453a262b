package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// session is the shared implementation of every backend: a backend only
// says how to wrap a script (argv and environment); running, bounding,
// killing and the tamper check are the same for all, so the overhead
// benchmark compares like with like.
type session struct {
	name string
	pol  *Policy
	tmp  string // host path of the private temporary directory ("" for none)
	// wrap returns the argv (argv[0] is a path) and environment for script.
	wrap func(script, dir string) (argv, env []string, err error)
	// tree selects how the process tree is isolated (see proc_*.go).
	tree treeMode
	// helper is the harness executable's path as seen inside (probes use it).
	helper string
}

func (s *session) Backend() string { return s.name }
func (s *session) Policy() *Policy { return s.pol }

func (s *session) Close() error {
	if s.tmp == "" {
		return nil
	}
	err := os.RemoveAll(s.tmp)
	s.tmp = ""
	return err
}

// timeoutMessage tells the model what happened and what to do next.
func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("\n[harness: command timed out after %s; it and every process it started were killed (exit %d). Narrow the command: smaller input, an explicit limit, or no long-running servers in the foreground.]\n", d, TimeoutExit)
}

func (s *session) Run(ctx context.Context, c Cmd) (*Result, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = s.pol.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dir := c.Dir
	if dir == "" {
		dir = s.pol.Project
	}
	argv, env, err := s.wrap(c.Script, dir)
	if err != nil {
		return nil, err
	}
	before := snapshot(s.pol.Protected)

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	limit := s.pol.OutputLimit
	if limit <= 0 {
		limit = 1 << 20
	}
	buf := &boundedBuffer{limit: limit}
	var stderr io.Writer = buf
	if c.Stdout != nil || c.Stderr != nil {
		cmd.Stdout, cmd.Stderr = orDiscard(c.Stdout), orDiscard(c.Stderr)
		stderr = cmd.Stderr
	} else {
		cmd.Stdout, cmd.Stderr = buf, buf
	}
	cmd.SysProcAttr = procAttr(s.tree)
	// A grandchild that escaped the kill cannot hold the output pipe open.
	cmd.WaitDelay = time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s sandbox: %w", s.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-runCtx.Done():
		killTree(cmd.Process, s.tree)
		err = <-done
	}
	r := &Result{Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		r.TimedOut, r.ExitCode = true, TimeoutExit
		io.WriteString(stderr, timeoutMessage(timeout))
	case ctx.Err() != nil:
		r.ExitCode = 130
		io.WriteString(stderr, "\n[harness: command interrupted]\n")
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
		if r.ExitCode < 0 { // killed by a signal
			r.ExitCode = 128 + signalOf(ee)
		}
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited; a leftover process held the pipe and was cut off.
	case err != nil:
		return nil, fmt.Errorf("running the command in the %s sandbox: %w", s.name, err)
	}
	r.Output, r.Truncated = buf.result()
	r.Tampered = changed(before, snapshot(s.pol.Protected))
	return r, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
