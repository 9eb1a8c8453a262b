//go:build !linux

package walls

import (
	"os"
	"syscall"
)

// openHandle opens abs for reading without blocking (a FIFO opens at once)
// and without taking a controlling terminal; its real path is checked to
// name the very file opened.
func openHandle(abs string) (*os.File, string, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, "", err
	}
	real, err := fdRealPath(f, abs)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

// reopenRead returns h: it is already open for reading.
func reopenRead(h *os.File) (*os.File, error) { return h, nil }

// fdRealPath asks the system for f's path (F_GETPATH on macOS), else
// resolves want and checks that it names f's file.
func fdRealPath(f *os.File, want string) (string, error) {
	if p, err := openedPath(f); err == nil && p != "" {
		return p, nil
	}
	return realPathBySameFile(f, want)
}
