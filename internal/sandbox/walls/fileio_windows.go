package walls

import (
	"os"
	"path/filepath"
)

const isUnixLike = false

func unprivilegedRead(string, os.FileInfo) error { return nil }

// openDirBeneath opens parent's subdirectory name; Windows has no
// descriptor-relative open here, so a swapped link is caught by Lstat.
func openDirBeneath(parent *os.File, name string) (*os.File, error) {
	p := filepath.Join(parent.Name(), name)
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return nil, os.ErrNotExist
	}
	return os.Open(p)
}

// ProcessAlive is conservative on Windows: every owner counts as alive.
func ProcessAlive(int) bool { return true }

func OwnedByMe(os.FileInfo) bool { return false }
