package autorun

import (
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// kind is one name pattern (slash-separated, relative to a root or to
// one of its subdirectories; a trailing "/**" takes every file beneath)
// and what runs it.
type kind struct {
	pattern string
	runBy   string
	top     bool // only at a root, not in subdirectories
}

var kinds = []kind{
	{pattern: ".husky/**", runBy: "husky: git hooks, at your next git commit or push"},
	{pattern: ".pre-commit-config.yaml", runBy: "pre-commit: at your next git commit"},
	{pattern: "lefthook.yml", runBy: "lefthook: git hooks, at your next git commit"},
	{pattern: "lefthook.yaml", runBy: "lefthook: git hooks, at your next git commit"},
	{pattern: ".lefthook.yml", runBy: "lefthook: git hooks, at your next git commit"},
	{pattern: ".lefthook.yaml", runBy: "lefthook: git hooks, at your next git commit"},
	{pattern: "lefthook-local.yml", runBy: "lefthook: git hooks, at your next git commit"},
	{pattern: ".lefthook/**", runBy: "lefthook: git hook scripts, at your next git commit"},
	{pattern: ".envrc", runBy: "direnv: when your shell enters the directory (after direnv allow)"},
	{pattern: ".vscode/tasks.json", runBy: "VS Code: tasks, some on folder open (runOn: folderOpen)"},
	{pattern: ".vscode/settings.json", runBy: "VS Code: settings can name programs it runs (terminal, interpreters, git)"},
	{pattern: ".devcontainer.json", runBy: "Dev Containers: initializeCommand on your machine, postCreateCommand in the container"},
	{pattern: ".devcontainer/**", runBy: "Dev Containers: initializeCommand on your machine, postCreateCommand in the container"},
	{pattern: "AGENTS.md", runBy: "coding agents: instructions read at the next session"},
	{pattern: "CLAUDE.md", runBy: "Claude Code: instructions read at the next session"},
	{pattern: "GEMINI.md", runBy: "Gemini CLI: instructions read at the next session"},
	{pattern: ".cursorrules", runBy: "Cursor: instructions read at the next session"},
	{pattern: ".cursor/rules/**", runBy: "Cursor: instructions read at the next session"},
	{pattern: ".github/copilot-instructions.md", runBy: "GitHub Copilot: instructions read at the next session"},
	{pattern: ".agents/**", runBy: "harness: skills, commands, settings and hooks loaded at the next session"},
	{pattern: ".claude/**", runBy: "Claude Code: settings (hooks run commands), commands and skills"},
	{pattern: ".gemini/**", runBy: "Gemini CLI: settings, commands and extensions"},
	{pattern: ".mcp.json", runBy: "MCP servers started by coding agents at their next session"},
	{pattern: "harness.Dockerfile", runBy: "harness: built for the next container session", top: true},
	{pattern: ".npmrc", runBy: "npm: config can name a shell or node options for every npm command"},
	{pattern: ".yarnrc.yml", runBy: "yarn: yarnPath and plugins run at every yarn command"},
	{pattern: ".yarnrc", runBy: "yarn: yarn-path runs at every yarn command"},
	{pattern: ".pnpmfile.cjs", runBy: "pnpm: runs at every pnpm install"},
	{pattern: "mise.toml", runBy: "mise: hooks and env when your shell enters the directory"},
	{pattern: ".mise.toml", runBy: "mise: hooks and env when your shell enters the directory"},
}

// venvFiles are the files of a virtualenv's site-packages that Python
// runs at every start of that environment's interpreter.
var venvFiles = []string{"*.pth", "sitecustomize.py", "usercustomize.py"}

const venvRunBy = "Python: runs at every start of this virtualenv's python"

// File is one file of an auto-run kind that changed.
type File struct {
	Path   string `json:"path"`
	Change string `json:"change"` // "created", "changed" or "removed"
	RunBy  string `json:"run_by"`
}

func (f File) String() string { return f.Path + " (" + f.Change + "): " + f.RunBy }

// stamp is what a file was: its hash, or that it was not a regular file.
type stamp struct {
	sum   [32]byte
	other bool // a link, FIFO, directory…: not read
	runBy string
}

type snapshot map[string]stamp

// maxRead bounds the bytes hashed per file; beyond it the size and the
// first maxRead bytes stand for the file.
const maxRead = 4 << 20

// skipDirs are never looked into for the subdirectory names: large, or
// written by tools rather than people.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true, "target": true, "dist": true, "build": true, ".venv": true, "venv": true, "__pycache__": true}

func scan(roots []string) snapshot {
	s := snapshot{}
	for _, root := range roots {
		// The root, then one and two levels down (monorepos' packages).
		level := []string{root}
		for depth := 0; depth < 3 && len(level) > 0; depth++ {
			var next []string
			for _, d := range level {
				for _, k := range kinds {
					if !k.top || depth == 0 {
						s.add(d, k.pattern, k.runBy)
					}
				}
				if depth == 2 {
					continue
				}
				ents, err := os.ReadDir(d)
				if err != nil {
					continue
				}
				for _, e := range ents {
					if e.IsDir() && !skipDirs[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
						next = append(next, filepath.Join(d, e.Name()))
					}
				}
			}
			level = next
		}
		for _, v := range venvs(root) {
			for _, sp := range sitePackages(v) {
				for _, pat := range venvFiles {
					s.add(sp, pat, venvRunBy)
				}
			}
		}
	}
	return s
}

// add stamps the files under dir that pattern names.
func (s snapshot) add(dir, pattern, runBy string) {
	if base, ok := strings.CutSuffix(pattern, "/**"); ok {
		top := filepath.Join(dir, filepath.FromSlash(base))
		if st, err := os.Lstat(top); err != nil || !st.IsDir() {
			if err == nil {
				s[top] = stamp{other: true, runBy: runBy}
			}
			return
		}
		n := 0
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if n++; n > 10000 {
				s[top] = stamp{other: true, runBy: runBy + " (more than 10,000 files: not all compared)"}
				return fs.SkipAll
			}
			s[p] = stampFile(p, runBy)
			return nil
		})
		return
	}
	if strings.ContainsAny(pattern, "*?[") {
		ms, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range ms {
			s[m] = stampFile(m, runBy)
		}
		return
	}
	p := filepath.Join(dir, filepath.FromSlash(pattern))
	if _, err := os.Lstat(p); err == nil {
		s[p] = stampFile(p, runBy)
	}
}

func stampFile(p, runBy string) stamp {
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return stamp{other: true, runBy: runBy}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return stamp{other: true, runBy: runBy}
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, io.LimitReader(f, maxRead))
	h.Write([]byte{byte(st.Size()), byte(st.Size() >> 8), byte(st.Size() >> 16), byte(st.Size() >> 24), byte(st.Size() >> 32)})
	var out stamp
	copy(out.sum[:], h.Sum(nil))
	out.runBy = runBy
	return out
}

// venvs are the virtualenvs at a root: directories holding pyvenv.cfg.
func venvs(root string) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(root, e.Name())
		if _, err := os.Lstat(filepath.Join(d, "pyvenv.cfg")); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func sitePackages(venv string) []string {
	var out []string
	for _, lib := range []string{"lib", "lib64"} {
		ms, _ := filepath.Glob(filepath.Join(venv, lib, "python*", "site-packages"))
		out = append(out, ms...)
	}
	if ms, _ := filepath.Glob(filepath.Join(venv, "Lib", "site-packages")); len(ms) > 0 {
		out = append(out, ms...)
	}
	return out
}

// diff lists what changed from a to b, sorted by path.
func diff(a, b snapshot) []File {
	var out []File
	for p, sb := range b {
		sa, ok := a[p]
		switch {
		case !ok:
			out = append(out, File{Path: p, Change: "created", RunBy: sb.runBy})
		case sa.sum != sb.sum || sa.other != sb.other:
			out = append(out, File{Path: p, Change: "changed", RunBy: sb.runBy})
		}
	}
	for p, sa := range a {
		if _, ok := b[p]; !ok {
			out = append(out, File{Path: p, Change: "removed", RunBy: sa.runBy})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Watch compares the auto-run files under its roots with what they were.
type Watch struct {
	mu    sync.Mutex
	roots []string
	start snapshot // at New: for All
	last  snapshot // at the last Changes
}

// New takes the first snapshot of roots (the session's writable roots).
func New(roots ...string) *Watch {
	w := &Watch{roots: append([]string(nil), roots...)}
	w.start = scan(w.roots)
	w.last = w.start
	return w
}

// Changes lists what was created, changed or removed since the last
// call (or New), and takes that as the new reference.
func (w *Watch) Changes() []File {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := scan(w.roots)
	out := diff(w.last, now)
	w.last = now
	return out
}

// All lists what differs now from the session's start.
func (w *Watch) All() []File {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := scan(w.roots)
	w.last = now
	return diff(w.start, now)
}

// Rel shortens f's path to be relative to root when it lies beneath it.
func Rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return path.Clean(filepath.ToSlash(r))
	}
	return p
}
