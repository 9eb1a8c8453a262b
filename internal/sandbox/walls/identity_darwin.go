package walls

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openedPath is the path the kernel names for f's descriptor: F_GETPATH
// gives the on-disk spelling (its case, through firmlinks as / sees them),
// whatever spelling opened it.
func openedPath(f *os.File) (string, error) {
	// MAXPATHLEN bytes, 8-aligned: x/sys has no F_GETPATH helper, and
	// FcntlFstore is its only fcntl that passes a pointer through.
	var buf [unix.PathMax / 8]uint64
	if err := unix.FcntlFstore(f.Fd(), unix.F_GETPATH, (*unix.Fstore_t)(unsafe.Pointer(&buf[0]))); err != nil {
		return "", err
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b), nil
}
