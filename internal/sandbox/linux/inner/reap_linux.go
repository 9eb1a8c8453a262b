package inner

import "golang.org/x/sys/unix"

// reapUntil waits for any child, not only pid, until pid exits, and
// returns pid's status. The supervisors that call it are child subreapers
// (like a PID namespace's init): every orphan of the command is
// re-parented to them, so waiting for pid alone would leave those as
// zombies, each holding a pid against the command's limit. An error other
// than EINTR (ECHILD: pid was already reaped) ends the wait with an empty
// status.
func reapUntil(pid int) unix.WaitStatus {
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || wpid == pid {
			return ws
		}
	}
}
