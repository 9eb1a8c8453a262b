//go:build unix

package reminder

import (
	"os"
	"syscall"
)

const syscallNonblock = syscall.O_NONBLOCK

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
