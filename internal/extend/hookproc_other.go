//go:build !unix

package extend

import "os/exec"

// ownGroup is a no-op where there are no process groups: cancellation
// kills the shell, and WaitDelay bounds the wait for its children.
func ownGroup(*exec.Cmd) {}
