//go:build !unix

package checkpoint

// alive cannot tell here: a marker is taken as a live session's.
func alive(pid int) bool { return pid > 0 }
