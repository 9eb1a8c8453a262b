//go:build !linux && !darwin

package sandbox

import (
	"io/fs"
	"time"
)

// changeTime: no ctime here; the watch reads every directory each time.
func changeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
