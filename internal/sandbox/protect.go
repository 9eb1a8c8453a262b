package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Finding is a path that git would act on (a repository, a pointer to
// one, a hooks directory) which appeared in a writable root after the
// session started. Refresh protects it from then on; the caller reports it.
type Finding struct {
	Path string // the .git entry, gitdir or repository directory
	Kind string // "repository", "gitdir pointer", "bare repository", "hooks path"
	// RunsCode names what in its configuration or hooks would run a
	// program on the user's next git command there (filter.x.clean,
	// core.fsmonitor, hooks/pre-commit…): empty when nothing does yet.
	RunsCode []string
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s at %s", f.Kind, f.Path)
	if len(f.RunsCode) > 0 {
		s += " (configures code to run: " + strings.Join(f.RunsCode, ", ") + ")"
	}
	return s
}

// Refresh looks again through the writable roots for repositories,
// .git pointer files, the gitdirs they name, bare-repository-shaped
// directories (two of HEAD, config, objects) and hooks paths that
// appeared since the last look, adds each to the read-only carve-outs (a
// missing hooks path inside a writable root is created empty, so it can
// be), and returns them. The sandbox calls it after every command, the
// file tools after every write; the backends put the new carve-outs up
// before the next command.
func (p *Policy) Refresh() []Finding {
	known := map[string]bool{}
	for _, k := range p.protectedNow() {
		known[k] = true
	}
	var found []Finding
	for _, root := range p.Writable {
		_ = p.tree.walk(root, func(path string, d fs.DirEntry) (bool, error) {
			name := d.Name()
			switch {
			case name == ".git":
				if !known[path] {
					known[path] = true
					found = append(found, p.adopt(path, ".git")...)
				}
				return d.IsDir(), nil
			case name == "HEAD" && !d.IsDir():
				dir := filepath.Dir(path)
				if filepath.Base(dir) != ".git" && !known[dir] && !p.insideProtected(dir) && bareShaped(dir) {
					known[dir] = true
					found = append(found, p.adopt(dir, "bare")...)
				}
			}
			return false, nil
		})
	}
	if len(found) > 0 {
		p.mu.Lock()
		p.findings = append(p.findings, found...)
		p.gen++
		p.mu.Unlock()
	}
	return found
}

// Findings lists everything Refresh found this session, with RunsCode
// read again now: what the user's next git command there would run.
func (p *Policy) Findings() []Finding {
	p.mu.RLock()
	out := append([]Finding(nil), p.findings...)
	p.mu.RUnlock()
	for i, f := range out {
		if st, err := os.Lstat(f.Path); err == nil && st.IsDir() {
			out[i].RunsCode = runsCode(f.Path)
		}
	}
	return out
}

// generation counts the times the carve-outs grew; a launcher started at
// an older generation is restarted so the new ones are mounted.
func (p *Policy) generation() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.gen
}

func (p *Policy) insideProtected(path string) bool {
	for _, r := range p.protectedNow() {
		if within(path, r) {
			return true
		}
	}
	return false
}

// adopt protects a newly seen .git entry or bare repository and says what
// it found, the gitdir it names and its hooks path included.
func (p *Policy) adopt(path, how string) []Finding {
	before := map[string]bool{}
	for _, k := range p.protectedNow() {
		before[k] = true
	}
	var err error
	if how == "bare" {
		err = p.protectGitDir(path, path)
	} else {
		err = p.protectGit(path)
	}
	if err != nil {
		// A symlink at the path: refuse it to the file tools by name and
		// say so; it stays watched.
		p.mu.Lock()
		p.Protected = appendUnique(p.Protected, path)
		p.mu.Unlock()
		return []Finding{{Path: path, Kind: "symlink where git looks for a repository", RunsCode: []string{err.Error()}}}
	}
	var out []Finding
	for _, k := range p.protectedNow() {
		if before[k] {
			continue
		}
		f := Finding{Path: k, Kind: "repository"}
		st, err := os.Lstat(k)
		switch {
		case how == "bare" && k == path:
			f.Kind = "bare repository"
		case err == nil && !st.IsDir():
			f.Kind = "gitdir pointer"
		case filepath.Base(k) != ".git" && err == nil && bareShaped(k):
			f.Kind = "separate gitdir"
		case filepath.Base(k) != ".git":
			f.Kind = "hooks path"
		}
		if err == nil && st.IsDir() {
			f.RunsCode = runsCode(k)
		}
		out = append(out, f)
	}
	return out
}

// bareShaped reports a directory git would take for a repository.
func bareShaped(dir string) bool {
	n := 0
	for _, e := range []string{"HEAD", "config", "objects"} {
		if _, err := os.Lstat(filepath.Join(dir, e)); err == nil {
			n++
		}
	}
	return n >= 2
}

// codeKeys are git configuration keys whose value is a program git runs
// (matched on the last name part; section.subsection.key).
var codeKeys = map[string]bool{
	"clean": true, "smudge": true, "process": true, "textconv": true, "driver": true,
	"fsmonitor": true, "hookspath": true, "sshcommand": true, "pager": true, "editor": true,
	"askpass": true, "gitproxy": true, "external": true, "helper": true, "program": true,
	"packobjectshook": true, "command": true, "cmd": true, "path": true,
}

// runsCode lists what in a git directory would run a program: config keys
// naming one, aliases starting with !, includes (which pull in more
// config), and hooks that are executable files.
func runsCode(gitdir string) []string {
	var out []string
	if f, err := os.Open(filepath.Join(gitdir, "config")); err == nil {
		section := ""
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "[") {
				end := strings.IndexByte(line, ']')
				if end < 0 {
					continue
				}
				hdr := strings.TrimSpace(line[1:end])
				sec, sub, _ := strings.Cut(hdr, " ")
				section = strings.ToLower(sec)
				if sub = strings.Trim(strings.TrimSpace(sub), `"`); sub != "" {
					section += "." + sub
				}
				line = strings.TrimSpace(line[end+1:])
				if line == "" {
					continue
				}
			}
			k, v, _ := strings.Cut(line, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.TrimSpace(v)
			if k == "" || strings.HasPrefix(k, "#") || strings.HasPrefix(k, ";") {
				continue
			}
			top, _, _ := strings.Cut(section, ".")
			switch {
			case top == "alias" && strings.HasPrefix(strings.Trim(v, `"`), "!"),
				top == "include" || top == "includeif",
				codeKeys[k] && top != "include" && !(top == "core" && k == "editor" && v == ""):
				out = append(out, section+"."+k)
			}
		}
		f.Close()
	}
	hooks := filepath.Join(gitdir, "hooks")
	if hp := hooksPath(filepath.Join(gitdir, "config")); hp != "" {
		if !filepath.IsAbs(hp) {
			hp = filepath.Join(filepath.Dir(gitdir), hp)
		}
		hooks = hp
	}
	if ents, err := os.ReadDir(hooks); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".sample") {
				continue
			}
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				out = append(out, "hooks/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

// ensureHooksPath creates a missing hooks path inside a writable root, so
// it can be mounted read-only: left missing, a command could create it and
// fill it with hooks the user's next commit runs. Failing to is an error
// (the caller fails closed): a path watched but not walled protects nothing.
func (p *Policy) ensureHooksPath(hp string) error {
	if _, err := os.Lstat(hp); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if p.writableRootOf(resolve(hp)) == "" {
		return nil
	}
	if err := os.MkdirAll(hp, 0o755); err != nil {
		return fmt.Errorf("creating the hooks path %s so it can be read-only: %w", hp, err)
	}
	return nil
}

// Keep makes path, beneath a hidden directory, readable again (the
// session's own spill directory, made after the sandbox opened): commands
// see it from the next launcher on, the file tools at once.
func (p *Policy) Keep(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.KeepReadable = appendUnique(p.KeepReadable, filepath.Clean(path))
	if r, err := filepath.EvalSymlinks(path); err == nil {
		p.KeepReadable = appendUnique(p.KeepReadable, r)
	}
	p.gen++
}

// keepNow is a copy of KeepReadable as it stands.
func (p *Policy) keepNow() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]string(nil), p.KeepReadable...)
}

// isWritableRoot reports whether w is the project or an --add-dir root.
func (p *Policy) isWritableRoot(w string) bool {
	for _, r := range p.Writable {
		if r == w {
			return true
		}
	}
	return false
}

// writeRootsFor is writeRoots, without the project and --add-dir roots
// for the read-only variant (the build cache stays writable).
func (p *Policy) writeRootsFor(ro bool) []string {
	if !ro {
		return p.writeRoots()
	}
	var out []string
	for _, w := range p.writeRoots() {
		if !p.isWritableRoot(w) {
			out = append(out, w)
		}
	}
	return out
}
