//go:build unix

package walls

import "syscall"

// ONoFollow makes an open fail on a symlink rather than follow it.
const ONoFollow = syscall.O_NOFOLLOW
