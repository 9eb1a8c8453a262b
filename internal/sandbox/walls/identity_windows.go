package walls

import (
	"errors"
	"io/fs"
	"os"
)

// Windows has no sandbox backend; paths are decided by spelling there.
func SysFileID(fs.FileInfo) (fileID, bool) { return fileID{}, false }

func openedPath(*os.File) (string, error) {
	return "", errors.New("no descriptor path on windows")
}
