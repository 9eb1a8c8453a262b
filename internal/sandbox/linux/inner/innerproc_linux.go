package inner

import (
	"os"
	"time"
)

// watchProcs closes the returned channel when root-run pid's tree holds
// more than max processes: the kernel exempts root from RLIMIT_NPROC, so
// for a root harness the bound is counted (nil channel otherwise).
func WatchProcs(pid, max int, stop <-chan struct{}) <-chan struct{} {
	if max <= 0 || os.Geteuid() != 0 {
		return nil
	}
	return PollUntil(20*time.Millisecond, stop, func() bool { return len(descendants(pid)) > max })
}

// pollUntil closes the returned channel once cond holds, checked every
// period until stop is closed.
func PollUntil(period time.Duration, stop <-chan struct{}, cond func() bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if cond() {
					close(done)
					return
				}
			}
		}
	}()
	return done
}
