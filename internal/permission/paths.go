package permission

import (
	"os"
	"path/filepath"
	"strings"
)

// abs makes p absolute: ~ expands to the home directory, relative paths
// are taken from dir. The result is lexically clean, so "../" is resolved.
func (g *Gate) abs(p, dir string) string {
	switch {
	case p == "~":
		p = g.home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(g.home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// canon resolves every existing symlink on the way to p, so a link inside
// the project that points outside is seen for what it is.
func canon(p string) string {
	p = filepath.Clean(p)
	dir, rest := p, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		if rest == "" {
			rest = filepath.Base(dir)
		} else {
			rest = filepath.Join(filepath.Base(dir), rest)
		}
		dir = parent
	}
}

// canonPair is p and its canonical form (once if they agree): protected
// paths are matched both ways so neither a link to them nor their
// unresolved spelling slips through.
func canonPair(p string) []string {
	c := canon(p)
	if c == p {
		return []string{p}
	}
	return []string{p, c}
}

func within(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+string(os.PathSeparator))
}

func withinAny(path string, roots []string) (string, bool) {
	for _, r := range roots {
		if within(path, r) {
			return r, true
		}
	}
	return "", false
}

// devWritable are device files any command may write to.
func devWritable(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// canonCache memoises canon within one decision: a long command names the
// same paths many times.
type canonCache map[string]string

func (c canonCache) canon(p string) string {
	if c == nil {
		return canon(p)
	}
	if r, ok := c[p]; ok {
		return r
	}
	r := canon(p)
	c[p] = r
	return r
}

// writeProblem says why a write to abs (already absolute) is refused, or ""
// when it is inside the walls. roots are the writable roots in force.
func (g *Gate) writeProblem(abs string, roots []string, cc canonCache) (rule, reason string) {
	if devWritable(abs) {
		return "", ""
	}
	c := cc.canon(abs)
	for _, p := range []string{abs, c} {
		if ro, ok := withinAny(p, g.readOnly); ok {
			return "sandbox: read-only " + ro,
				abs + " is inside " + ro + ", which is read-only for the agent (the harness's own config and .git are protected); harness refuses this write whatever the permissions."
		}
	}
	if _, ok := withinAny(c, roots); ok {
		if _, ok := withinAny(abs, roots); ok {
			return "", ""
		}
	}
	return "sandbox: write outside the writable roots",
		abs + " is outside the writable roots (" + strings.Join(roots, ", ") + "): harness refuses writes there whatever the answer, rule or flag. Write inside the project instead; only the user can widen the walls, by starting harness with --add-dir DIR."
}

// readProblem says why reading abs is refused, or "".
func (g *Gate) readProblem(abs string, cc canonCache) (rule, reason string) {
	if len(g.denyRead) == 0 {
		return "", ""
	}
	for _, p := range []string{abs, cc.canon(abs)} {
		if d, ok := withinAny(p, g.denyRead); ok {
			return "sandbox: deny-read " + d,
				abs + " is a protected secret path (" + d + "); harness never reads it. Do not try another way to read it."
		}
	}
	return "", ""
}
