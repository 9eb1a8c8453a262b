//go:build unix && !linux && !darwin

package walls

import (
	"errors"
	"os"
)

func openedPath(*os.File) (string, error) {
	return "", errors.New("no descriptor path on this system")
}
