// Command harness is a coding agent for the terminal. All logic lives in
// internal/cli; main only wires the process to it.
package main

import (
	"context"
	"os"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/cli"
)

func main() {
	// When re-executed as the sandbox's inner stage, this never returns.
	inner.RunHelperIfRequested()
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
