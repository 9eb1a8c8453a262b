package walls

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadFileNoFollow reads a regular file of at most limit bytes, refusing a
// symlink at path itself.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|ONoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}
