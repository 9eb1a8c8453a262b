package sandbox

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// stallEnv asks a supervisor started from the test binary to stall before
// it serves, the way a loaded machine stalls it, giving the Go scheduler
// the chance to move the main goroutine off the main thread.
const stallEnv = "HARNESS_SANDBOX_TEST_STALL"

// stallIfAsked runs in TestMain before RunHelperIfRequested, that is after
// every init and before anything serveSupervisor does. It sleeps in short
// steps while other goroutines keep the threads busy, until the main
// goroutine has left the main thread or 40 steps have passed: unless the
// main thread was locked in init, the main goroutine leaves it within a
// few steps.
func stallIfAsked() {
	if len(os.Args) < 2 || os.Args[1] != inner.SupervisorArg || os.Getenv(stallEnv) == "" {
		return
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	for i := 0; i < 40 && unix.Gettid() == unix.Getpid(); i++ {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
}

// TestSupervisorStalledBeforeServing: supervisors that stall after start
// (as under load) still run every command. With the main thread locked in
// serveSupervisor rather than in init, the stall lets a command thread land
// on the main thread and the guard fails the command with "would go up on
// the supervisor's main thread".
func TestSupervisorStalledBeforeServing(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			sb, _ := openTest(t, backend, func(o *walls.PolicyOptions) { o.UnfilteredEnv = []string{stallEnv + "=1"} })
			// Six at once, twice: several supervisors are started, each stalled.
			for round := range 2 {
				var wg sync.WaitGroup
				for i := range 6 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						want := fmt.Sprintf("ok-%d-%d", round, i)
						r, err := sb.Run(context.Background(), Cmd{Script: "echo " + want})
						if err != nil {
							t.Error(err)
							return
						}
						if r.ExitCode != 0 || strings.TrimSpace(string(r.Output)) != want {
							t.Errorf("command %s: exit %d, output %q", want, r.ExitCode, r.Output)
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}
