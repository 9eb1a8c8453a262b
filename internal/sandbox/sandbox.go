package sandbox

import (
	"context"
	"time"
)

// Cmd is one shell command to run.
type Cmd struct {
	// Script is passed to /bin/sh -c.
	Script string
	// Dir is the working directory; empty means the project root.
	Dir string
	// Timeout overrides the policy's timeout when non-zero.
	Timeout time.Duration
}

// Result is what a command did.
type Result struct {
	Output    []byte // stdout and stderr interleaved in order, bounded by Policy.OutputLimit
	Truncated int    // bytes dropped by the bound
	ExitCode  int    // 124 on timeout
	TimedOut  bool
	Duration  time.Duration
	// Tampered lists protected paths (hooks, git config, carve-outs) that
	// changed during the command. Non-empty means the walls did not hold or
	// the backend cannot hold them; the caller reports it loudly.
	Tampered []string
}

// Sandbox is one session's sandbox.
type Sandbox interface {
	// Run executes cmd. An error means the command could not be started;
	// a command that ran and failed is a Result with a non-zero ExitCode.
	Run(ctx context.Context, cmd Cmd) (*Result, error)
	// Backend names the backend in force: bwrap, landlock, seatbelt or none.
	Backend() string
	// Policy is the policy this sandbox enforces.
	Policy() *Policy
	// Close removes the session's private temporary directory.
	Close() error
}
