package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// None runs commands directly on the host. It exists only when the user asks
// for it; every command then needs approval.
type None struct{ P *Policy }

// Backend implements Sandbox.
func (n *None) Backend() string { return "none" }

// Policy implements Sandbox.
func (n *None) Policy() *Policy { return n.P }

// Close implements Sandbox.
func (n *None) Close() error { return nil }

// Run implements Sandbox.
func (n *None) Run(ctx context.Context, c Cmd) (*Result, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = n.P.Timeout
	}
	dir := c.Dir
	if dir == "" {
		dir = n.P.Project
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", c.Script)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	r := &Result{Output: buf.Bytes(), Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.TimedOut, r.ExitCode = true, 124
	case errors.As(err, &ee):
		r.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	return r, nil
}
