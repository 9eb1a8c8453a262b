// Command harness-sandbox is harness's sandbox helper: the inner stage,
// launcher, supervisors and probes a sandbox re-executes for each command.
// It links nothing else, so each command's start skips the init of every
// package harness itself needs (package backend, HelperExe). harness uses
// it when it sits beside the harness executable and is of the same build;
// run on its own, it says what it is.
package main

import (
	"fmt"
	"os"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

func main() {
	// When run as a sandbox stage, this never returns.
	inner.RunHelperIfRequested()
	fmt.Fprintln(os.Stderr, "harness-sandbox is harness's sandbox helper: harness runs it inside the walls; run harness instead")
	os.Exit(2)
}
