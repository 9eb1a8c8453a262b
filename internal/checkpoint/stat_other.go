//go:build !unix

package checkpoint

import "io/fs"

const oNonblock = 0

func statIDs(st fs.FileInfo) (ino uint64, mtime int64) { return 0, st.ModTime().UnixNano() }
