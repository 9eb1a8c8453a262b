package walls

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openHandle opens abs as an O_PATH handle: no read, so no device, FIFO or
// terminal is opened for real (nothing blocks, no side effect), and with
// RESOLVE_NO_MAGICLINKS no /proc/<pid>/fd, /dev/stdin or /dev/fd/N link
// reaches one of the harness's own descriptors. The handle's real path is
// the kernel's (/proc/self/fd), not a path resolved beforehand.
func openHandle(abs string) (*os.File, string, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, abs, &how)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// Before Linux 5.6 (or openat2 filtered): a magic link is then
		// refused by its real path, under /proc or /dev, a kernel view.
		fd, err = unix.Open(abs, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if errors.Is(err, unix.ELOOP) {
		return nil, "", denied(abs, "%s goes through a /proc magic link (/dev/stdin, /dev/fd/N, /proc/<pid>/fd); the file tools read files by their real path", abs)
	}
	if err != nil {
		return nil, "", &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	f := os.NewFile(uintptr(fd), abs)
	real, err := fdRealPath(f, abs)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// reopenRead opens the file h holds for reading, through h itself (the
// same inode whatever the path now names), without blocking and without
// taking a controlling terminal. h is closed.
func reopenRead(h *os.File) (*os.File, error) {
	defer h.Close()
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(h.Fd())), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: h.Name(), Err: err}
	}
	f := os.NewFile(uintptr(fd), h.Name())
	a, err1 := h.Stat()
	b, err2 := f.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(a, b) || !b.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", h.Name(), ErrRaced)
	}
	return f, nil
}

// fdRealPath asks the kernel which path f's open file has now.
func fdRealPath(f *os.File, want string) (string, error) {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return realPathBySameFile(f, want) // no /proc on the host
	}
	if strings.HasSuffix(real, " (deleted)") || !strings.HasPrefix(real, "/") {
		return "", fmt.Errorf("%s: %w (it was removed or is not a path)", want, ErrRaced)
	}
	return real, nil
}
