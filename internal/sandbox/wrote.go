package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// writesRunner is a Runner that also says what a command wrote beneath
// the roots it tracks (the launcher: linux/inner/wrote_linux.go).
type writesRunner interface {
	RunWrites(ctx context.Context, script, dir string, track []string, journal *os.File, stdout, stderr io.Writer) (code int, note string, w inner.Writes, err error)
}

func wroteUnknown(why string) inner.Writes { return inner.Writes{Why: why} }

// tracked are the writable roots as the policy names them and, where a
// symlink leads there, as the sandbox resolves them (the supervisor
// reports a path through a link under its target).
type tracked struct {
	roots, real []string
	inside      []string
}

func trackRoots(roots []string) tracked {
	t := tracked{roots: roots}
	for _, r := range roots {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			real = r
		}
		t.real = append(t.real, real)
		t.inside = append(t.inside, r)
		if real != r {
			t.inside = append(t.inside, real)
		}
	}
	return t
}

// host names each path beneath the root the policy names, once.
func (t tracked) host(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		for i, real := range t.real {
			if real != t.roots[i] && walls.Within(p, real) {
				rel, _ := filepath.Rel(real, p)
				p = filepath.Join(t.roots[i], rel)
				break
			}
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
