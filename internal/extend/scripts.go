package extend

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxScriptBytes bounds a file a hook names, read to pin its content.
const maxScriptBytes = 16 << 20

// namedPaths are the paths a hook's command names: every word the shell
// would see as a literal (with the hook's environment and
// $CLAUDE_PROJECT_DIR expanded, ~ too) that is a path — spelled as one
// (/…, ./…, ../…, ~/…, $CLAUDE_PROJECT_DIR/…), or naming something that
// exists from the project directory, where the hook runs — and the value
// of --opt=PATH; not the files it writes (> log). A word computed at run
// time ($(…)) names nothing harness can pin, but the words inside it do.
func namedPaths(command, project string, env []string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	vars := append(append([]string(nil), env...), "CLAUDE_PROJECT_DIR="+project, "HARNESS_PROJECT_DIR="+project)
	cfg := &expand.Config{Env: expand.ListEnviron(vars...)}
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	var out []string
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok {
			// What a hook writes (its log) is not what it runs; what it
			// reads from (bash < x.sh) may be.
			return r.Op == syntax.RdrIn || r.Op == syntax.DplIn
		}
		w, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		s, err := expand.Literal(cfg, w)
		if err != nil || s == "" {
			return true
		}
		if strings.HasPrefix(s, "-") {
			_, v, ok := strings.Cut(s, "=")
			if !ok {
				return true
			}
			s = v
		}
		if rest, ok := strings.CutPrefix(s, "~/"); ok && home != "" {
			s = filepath.Join(home, rest)
		}
		p := s
		if !filepath.IsAbs(p) {
			p = filepath.Join(project, p)
		}
		p = filepath.Clean(p)
		spelled := filepath.IsAbs(s) || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return true // a directory is not what runs
		case err != nil && !spelled:
			return true
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
		return true
	})
	return out
}

// pins are the files of paths that commands can reach, each with its
// content's digest as it is now.
func (r Reader) pins(paths []string) []Pin {
	var out []Pin
	for _, p := range paths {
		if !r.reach(p) {
			continue
		}
		data, _, _, err := r.ReadFile(p, maxScriptBytes)
		sum := ""
		switch {
		case err == nil:
			h := sha256.Sum256(data)
			sum = hex.EncodeToString(h[:])
		case errors.Is(err, fs.ErrNotExist):
			sum = "absent"
		default:
			// A directory, a device, a secret, a file too large: what it
			// is, not its bytes; a change of kind still changes the key.
			sum = "unreadable"
			if fi, err := os.Lstat(p); err == nil {
				sum += " " + fi.Mode().Type().String()
			}
		}
		out = append(out, Pin{Path: p, Sum: sum})
	}
	return out
}

// Pins are the files a command line (shell syntax, run in project) names
// that commands can write, each with its content's digest now: what an
// approval of something that runs it (an MCP server's command) is pinned
// to, beside the command itself.
func (r Reader) Pins(command, project string, env []string) []Pin {
	return r.pins(namedPaths(command, project, env))
}

// Digest is one digest of pins; "" for none.
func Digest(pins []Pin) string {
	if len(pins) == 0 {
		return ""
	}
	d := sha256.New()
	for _, p := range pins {
		d.Write([]byte(p.Path + "\x00" + p.Sum + "\x00"))
	}
	return hex.EncodeToString(d.Sum(nil))
}
