//go:build unix

package walls

import (
	"io/fs"
	"syscall"
)

func SysFileID(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}
