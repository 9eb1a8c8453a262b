//go:build !unix

package reminder

import "os"

const syscallNonblock = 0

func inode(os.FileInfo) uint64 { return 0 }
