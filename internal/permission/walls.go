package permission

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// The walls are the sandbox Policy's: every "may this path be read or
// written at all" question is put to Policy.CheckRead and CheckWrite, so
// the gate and the kernel walls refuse the same set of paths, protected
// carve-outs that do not exist yet included. What is left here is how a
// shell word names a path, and the few targets a sandboxed command may
// write although they are outside the writable roots (/dev/null, the
// private /tmp).

// abs makes p absolute: ~ expands to the home directory, relative paths
// are taken from dir. The result is lexically clean, so "../" is resolved
// here and symlinks by the policy.
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

// canon is the form rules are matched against: every symlink resolved as
// the policy resolves it.
func canon(p string) string { return walls.Resolve(p) }

// readWall says why the policy refuses to let abs be read, or "".
func (g *Gate) readWall(abs string) (rule, reason string) {
	if err := g.pol.Policy().CheckRead(abs); err != nil {
		return "sandbox: never read " + abs, err.Error() + ". Do not try another way to read it."
	}
	return "", ""
}

// writeWall says why the policy refuses a write to abs, or "".
func (g *Gate) writeWall(abs string) (rule, reason string) {
	if err := g.pol.Policy().CheckWrite(abs); err != nil {
		return "sandbox: never write " + abs, err.Error() + ". harness refuses this write whatever the rules, answers or --yolo say; write inside the project instead (only the user can widen the walls, by starting harness with --add-dir DIR)."
	}
	return "", ""
}

// freeDevice are device files any command may write to: they keep nothing.
// /dev/fd/N is not one of them: opening it reopens whatever N is, for
// writing, even a file N was opened read-only on.
func freeDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/full", "/dev/tty":
		return true
	}
	return false
}

// stdStream names a command's own standard streams (links into
// /proc/self/fd, which the policy never lets be read by path): naming one
// reads no file.
func stdStream(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/null", "/dev/zero", "/dev/tty":
		return true
	}
	return false
}

// privateTmp reports whether abs is in the sandbox's private /tmp, which
// commands may write freely: it is the session's own scratch space, not
// the host's. ask is set when the path goes through a symlink there,
// which earlier commands may have pointed anywhere.
func (g *Gate) privateTmp(abs string) (free, ask bool) {
	if g.o.Unsandboxed || (abs != "/tmp" && !strings.HasPrefix(abs, "/tmp/")) {
		return false, false
	}
	pol := g.pol.Policy()
	for _, w := range pol.Writable() {
		if within(abs, w) {
			return false, false // a root under /tmp (tests): the policy decides
		}
	}
	host := pol.TempDir()
	if host == "" {
		return true, false // no host view of it (not opened yet)
	}
	cur := host
	for _, part := range strings.Split(strings.TrimPrefix(abs, "/tmp"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			break // what does not exist yet is created inside
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return false, true
		}
	}
	return true, false
}

func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}

// fileRule is the rule that decides a read or write of abs by tool. Rules
// see the canonical path, so a link cannot borrow another path's grant; a
// deny or ask on the path as written still counts, so a link cannot dodge
// one either.
func fileRule(rs *ruleSet, tool string, write bool, abs string) (best *rule, c string) {
	c = canon(abs)
	best = pick(rs.fileMatches(tool, write, c))
	if c != abs {
		if b := pick(rs.fileMatches(tool, write, abs)); b != nil && b.verdict > Allow && (best == nil || b.verdict > best.verdict) {
			best = b
		}
	}
	return best, c
}
