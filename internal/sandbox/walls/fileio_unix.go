//go:build unix

package walls

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

const isUnixLike = true

// unprivilegedRead holds a root-run harness to what a command can read:
// commands hold no capabilities, so a file of another user's with no read
// bit for root's uid or groups, or behind a directory root could only
// search by capability, is refused to the file tools as well.
func unprivilegedRead(real string, fi os.FileInfo) error {
	if os.Geteuid() != 0 {
		return nil // the kernel applies the same bits to the harness itself
	}
	if !permits(fi, 4) {
		return denied(real, "%s is not readable without root's privileges (mode %v, owner uid %d); commands have none, so neither do the file tools", real, fi.Mode().Perm(), ownerOf(fi))
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil && !permits(st, 1) {
			return denied(real, "%s lies in %s, which only root's privileges can enter (mode %v); commands have none, so neither do the file tools", real, d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// permits applies the owner/group/other bits for uid 0 without
// capabilities: bit is 4 (read) or 1 (search).
func permits(fi os.FileInfo, bit os.FileMode) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == 0:
		return perm&(bit<<6) != 0
	case inGroups(st.Gid):
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

func inGroups(gid uint32) bool {
	if uint32(os.Getegid()) == gid {
		return true
	}
	gs, _ := os.Getgroups()
	for _, g := range gs {
		if uint32(g) == gid {
			return true
		}
	}
	return false
}

func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// openDirBeneath opens the directory name inside parent without following
// a link in its place.
func openDirBeneath(parent *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(parent.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(parent.Name(), name)), nil
}

// ProcessAlive reports whether pid names a live process (or one we may not
// signal, which is alive too).
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// OwnedByMe reports whether fi belongs to this process's user.
func OwnedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
