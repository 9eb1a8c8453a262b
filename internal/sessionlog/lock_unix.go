//go:build unix

package sessionlog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lock takes the log's single-writer lock: an flock on the file itself,
// held while the Log is open and dropped by the kernel when the process
// dies, so a crash never leaves a stale lock behind. Readers take none.
func lock(f *os.File, path string) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return &LockedError{Path: path, PID: lockHolder(f)}
	}
	return fmt.Errorf("locking session log %s: %w", path, err)
}

// lockHolder finds the process holding f's flock in /proc/locks (Linux),
// or 0.
func lockHolder(f *os.File) int {
	var stat unix.Stat_t
	if unix.Fstat(int(f.Fd()), &stat) != nil {
		return 0
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer locks.Close()
	// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"
	want := fmt.Sprintf(":%d", stat.Ino)
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || !strings.HasSuffix(fs[5], want) {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil && pid != os.Getpid() {
			return pid
		}
	}
	return 0
}
