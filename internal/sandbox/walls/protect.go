package walls

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// refresh looks again, with the session's tree watch t, for
// repositories, .git pointer files, the gitdirs they name,
// bare-repository-shaped directories (two of HEAD, config, objects) and
// hooks paths that appeared in the writable roots, and returns the next
// snapshot, with each of them read-only (a missing hooks path inside a
// writable root is created empty, so it can be), and what it found.
func (p *Policy) refresh(t *treeWatch) (*Policy, []Finding) {
	next := p.clone()
	known := map[string]bool{}
	for _, k := range next.protected {
		known[k] = true
	}
	var found []Finding
	for _, root := range next.writable {
		_ = t.walk(root, func(path string, d fs.DirEntry) (bool, error) {
			name := d.Name()
			switch {
			case name == ".git":
				// A known one is read again: its config may have named a
				// hooks path since it was adopted (a parallel file-tool
				// write's Refresh can adopt it before the command that
				// makes it is done).
				again := known[path]
				known[path] = true
				found = append(found, next.adopt(path, ".git", again)...)
				return d.IsDir(), nil
			case name == "HEAD" && !d.IsDir():
				dir := filepath.Dir(path)
				if filepath.Base(dir) != ".git" && !known[dir] && !next.insideProtected(dir) && bareShaped(dir) {
					known[dir] = true
					found = append(found, next.adopt(dir, "bare", false)...)
				}
			}
			return false, nil
		})
	}
	if len(found) > 0 {
		next.findings = append(next.findings, found...)
		next.gen++
	}
	return next, found
}

// clone is p to build the next snapshot from; the lists that grow get
// arrays of their own, so appending never writes into p's.
func (p *Policy) clone() *Policy {
	q := *p
	q.readOnly = slices.Clone(p.readOnly)
	q.protected = slices.Clone(p.protected)
	q.keepReadable = slices.Clone(p.keepReadable)
	q.findings = slices.Clone(p.findings)
	q.seed = nil // only the first snapshot's scan seeds a watch
	return &q
}

// Findings lists everything Refresh found this session up to this
// snapshot, with RunsCode read again now: what the user's next git
// command there would run.
func (p *Policy) Findings() []Finding {
	out := slices.Clone(p.findings)
	for i, f := range out {
		if st, err := os.Lstat(f.Path); err == nil && st.IsDir() {
			out[i].RunsCode = runsCode(f.Path)
		}
	}
	return out
}

// Generation counts the times the carve-outs grew before this snapshot; a
// launcher started at an older generation is restarted so the new ones
// are mounted.
func (p *Policy) Generation() int { return p.gen }

func (p *Policy) insideProtected(path string) bool {
	for _, r := range p.protected {
		if Within(path, r) {
			return true
		}
	}
	return false
}

// adopt protects a newly seen .git entry or bare repository and says what
// it found, the gitdir it names and its hooks path included.
func (p *Policy) adopt(path, how string, again bool) []Finding {
	before := map[string]bool{}
	for _, k := range p.protected {
		before[k] = true
	}
	var err error
	if how == "bare" {
		err = p.protectGitDir(path, path)
	} else {
		err = p.protectGit(path)
	}
	if err != nil && again {
		return nil // said when it was first adopted; it stays protected
	}
	if err != nil {
		// A symlink at the path: refuse it to the file tools by name and
		// say so; it stays watched.
		p.protected = AppendUnique(p.protected, path)
		return []Finding{{Path: path, Kind: "symlink where git looks for a repository", RunsCode: []string{err.Error()}}}
	}
	var out []Finding
	for _, k := range slices.Clone(p.protected) {
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
	if err := mkdirAll(hp, 0o755); err != nil {
		return fmt.Errorf("creating the hooks path %s so it can be read-only: %w", hp, err)
	}
	return nil
}

// mkdirAll is os.MkdirAll; a test makes it fail.
var mkdirAll = os.MkdirAll

// keep adds path to the kept paths of a policy being built (Live.Keep).
func (p *Policy) keep(path string) {
	p.keepReadable = AppendUnique(p.keepReadable, filepath.Clean(path))
	if r, err := filepath.EvalSymlinks(path); err == nil {
		p.keepReadable = AppendUnique(p.keepReadable, r)
	}
	p.gen++
}

// IsWritableRoot reports whether w is the project or an --add-dir root.
func (p *Policy) IsWritableRoot(w string) bool {
	for _, r := range p.writable {
		if r == w {
			return true
		}
	}
	return false
}

// WriteRootsFor is writeRoots, without the project and --add-dir roots
// for the read-only variant (the build cache stays writable).
func (p *Policy) WriteRootsFor(ro bool) []string {
	if !ro {
		return p.WriteRoots()
	}
	var out []string
	for _, w := range p.WriteRoots() {
		if !p.IsWritableRoot(w) {
			out = append(out, w)
		}
	}
	return out
}
