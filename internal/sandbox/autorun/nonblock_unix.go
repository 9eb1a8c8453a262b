//go:build unix

package autorun

import "syscall"

// oNonblock keeps an open of a FIFO planted under a watched name from
// waiting for a writer.
const oNonblock = syscall.O_NONBLOCK
