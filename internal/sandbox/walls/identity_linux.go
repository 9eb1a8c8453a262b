package walls

import (
	"fmt"
	"os"
)

// openedPath is the path the kernel names for f's descriptor.
func openedPath(f *os.File) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}
