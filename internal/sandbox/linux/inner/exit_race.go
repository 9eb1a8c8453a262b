//go:build race

package inner

import (
	"os"
	"runtime"
	"syscall"
)

// exitStage ends a sandbox stage (launcher, supervisor, probe, container
// stage) with code. Built with -race, as only the tests build harness,
// a clean exit would first sleep the race runtime's atexit_sleep_ms (a
// second by default, time for goroutines still running to race), and the
// host waits out a launcher's exit at every session's end: a second per
// session across the suite. So a clean exit here skips that sleep and
// keeps the rest of what it decides: a race is reported on stderr when it
// happens, and the exit status is the race runtime's 66 if one was.
func exitStage(code int) {
	if code != 0 {
		os.Exit(code) // not a clean exit: the race runtime does not sleep
	}
	if runtime.RaceErrors() > 0 {
		os.Exit(66)
	}
	syscall.Exit(0)
}
