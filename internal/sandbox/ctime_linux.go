package sandbox

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is an inode's ctime, which no unprivileged process can set.
func changeTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
}
