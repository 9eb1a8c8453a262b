package walls

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is an inode's ctime, which no unprivileged process can set.
// ChangeTime is fi's ctime, when the platform gives it.
func ChangeTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctimespec.Sec, st.Ctimespec.Nsec), true
}
