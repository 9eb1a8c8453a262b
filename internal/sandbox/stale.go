package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// sessionPrefix names a session's private temporary directory, followed by
// the harness's pid and a random part.
const sessionPrefix = backend.SessionPrefix

// removeStale removes the private temporary directories (and their git
// shadows) that harness processes which are gone left behind: a crashed or
// killed harness cannot clean up after itself. A directory whose pid is
// alive, or that names none (an older harness), is left alone.
func removeStale() {
	ents, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), sessionPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || walls.ProcessAlive(pid) {
			continue
		}
		path := filepath.Join(os.TempDir(), e.Name())
		if fi, err := os.Lstat(path); err != nil || !walls.OwnedByMe(fi) {
			continue
		}
		os.RemoveAll(path)
	}
}
