//go:build !linux && !darwin

package walls

import (
	"io/fs"
	"time"
)

// changeTime: no ctime here; the watch reads every directory each time.
// ChangeTime: no ctime here.
func ChangeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
