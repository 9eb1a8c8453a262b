//go:build unix

package checkpoint

import (
	"io/fs"
	"syscall"
)

const oNonblock = syscall.O_NONBLOCK

func statIDs(st fs.FileInfo) (ino uint64, mtime int64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino), st.ModTime().UnixNano()
	}
	return 0, st.ModTime().UnixNano()
}
