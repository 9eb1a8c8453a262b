package inner

import (
	"os"
	"runtime"
	"strings"
)

// A stage execs the command from the main thread. PR_SET_PDEATHSIG, which
// harness sets on the stage it starts so the kernel kills it (and, as the
// init of its PID namespace, all it started) when harness dies, belongs to
// that thread alone: an execve from another thread of the process takes
// over as the thread group's leader without it, and a background job then
// outlives a harness killed with SIGKILL. Package init runs on the main
// thread; locking it here keeps main, and RunHelperIfRequested, there.
func init() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "__harness-") {
		runtime.LockOSThread()
	}
}
