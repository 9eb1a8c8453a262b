//go:build !unix

package sessionlog

import "os"

// lock is a no-op where flock does not exist: one writer per log is then
// the user's to keep.
func lock(*os.File, string) error { return nil }
