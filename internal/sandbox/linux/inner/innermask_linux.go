package inner

import (
	"os"
	"path/filepath"
)

type mask struct {
	Path string
	Dir  bool
}

// maskTargets canonicalises the paths to hide (mounts need real paths; a
// symlinked parent such as /var/run would make them fail) and drops the
// missing ones and the symlinks (whose targets are listed themselves).
func MaskTargets(paths []string) []mask {
	var out []mask
	seen := map[string]bool{}
	for _, d := range paths {
		if r, err := filepath.EvalSymlinks(filepath.Dir(d)); err == nil {
			d = filepath.Join(r, filepath.Base(d))
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		st, err := os.Lstat(d)
		if err != nil || st.Mode()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, mask{Path: d, Dir: st.IsDir()})
	}
	return out
}

// helperInTmp is where the harness binary is bound inside bwrap when its
// host path is under /tmp (which the private /tmp hides), as with go test.
const HelperInTmp = "/tmp/.harness-helper"
