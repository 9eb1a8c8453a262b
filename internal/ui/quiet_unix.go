//go:build linux || darwin || freebsd || netbsd || openbsd

package ui

import (
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Quiet puts the input terminal in the mode harness wants while a turn
// runs: keys are neither echoed nor held back for a whole line, so what
// the user types ahead does not scribble over the streaming reply and
// shows up, editable, at the next prompt; Ctrl-C still raises SIGINT so it
// interrupts the turn; Enter stays CR. restore puts the previous mode back. On anything
// but a terminal both are no-ops.
func (in *Input) Quiet() (restore func()) {
	f, ok := in.File()
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO | unix.ICANON
	quiet.Lflag |= unix.ISIG
	// Enter arrives as CR and Ctrl-J as LF, as at the prompt, so that an
	// Enter typed ahead sends its line there rather than starting a new one.
	quiet.Iflag &^= unix.ICRNL | unix.INLCR | unix.IGNCR
	quiet.Cc[unix.VMIN] = 1
	quiet.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, old) } //nolint:errcheck // best effort
}
