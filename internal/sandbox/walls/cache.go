package walls

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Build caches that persist across sessions live in a directory per
// project that harness owns:
//
//	<root>/projects/<hash>/project   the project's path (host-written, read-only inside)
//	<root>/projects/<hash>/cache/    writable inside that project's walls
//
// No host toolchain is pointed at it, so an entry the agent plants there
// (a poisoned build-cache object, a doctored module) can reach only later
// commands behind the same project's walls, never a host build. The host's
// own Go module cache is offered read-only, as a file:// entry ahead of
// the proxy in GOPROXY, so modules the host already has build offline.

// CacheVarsEnv names extra variables (comma-separated) that each get a
// directory of their own in the project's cache, e.g. "GRADLE_USER_HOME".
const CacheVarsEnv = "HARNESS_CACHE_VARS"

// CacheRoot is the base of harness's per-project caches:
// $XDG_CACHE_HOME/harness, else ~/.cache/harness. It is "" when neither is
// known.
func CacheRoot(home string, environ []string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok && filepath.IsAbs(v) {
			return filepath.Join(v, "harness")
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "harness")
}

// projectCacheDir is the directory of project's cache under root.
func projectCacheDir(root, project string) string {
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(root, "projects", hex.EncodeToString(sum[:8]))
}

// setupCache creates the project's cache under root and records it in p.
func (p *Policy) setupCache(root string, vars []string) error {
	dir := projectCacheDir(root, p.project)
	data := filepath.Join(dir, "cache")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("creating the project's build cache: %w", err)
	}
	for _, d := range []string{dir, data} {
		st, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("project build cache: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("the project's build cache %s is not a directory (a symlink?); remove it and retry", d)
		}
	}
	name := filepath.Join(dir, "project")
	if b, err := os.ReadFile(name); err != nil || string(b) != p.project+"\n" {
		if err := os.WriteFile(name, []byte(p.project+"\n"), 0o600); err != nil {
			return fmt.Errorf("recording the project's build cache: %w", err)
		}
	}
	c, err := canonical(data)
	if err != nil {
		return fmt.Errorf("project build cache: %w", err)
	}
	for _, d := range p.denyRead {
		if Within(c, d) || Within(d, c) {
			return fmt.Errorf("the build cache %s overlaps the secret path %s: set XDG_CACHE_HOME elsewhere", c, d)
		}
	}
	for _, w := range p.writable {
		if Within(w, c) {
			return fmt.Errorf("the build cache %s holds the writable root %s: set XDG_CACHE_HOME elsewhere", c, w)
		}
	}
	p.cache = c
	for _, v := range vars {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !validVarName(v) {
			return fmt.Errorf("%s: harness will not set %q to a cache directory (want a plain variable name, not PATH, HOME, TMPDIR, LD_*, GIT_*, HARNESS_* or one naming a key, token or secret)", CacheVarsEnv, v)
		}
		p.cacheVars = AppendUnique(p.cacheVars, v)
	}
	return nil
}

func validVarName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	up := strings.ToUpper(s)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return false
		}
	}
	switch up {
	case "", "PATH", "HOME", "SHELL", "TMPDIR", "USER", "LOGNAME", "PWD":
		return false
	}
	return !strings.HasPrefix(up, "LD_") && !strings.HasPrefix(up, "GIT_") && !strings.HasPrefix(up, "HARNESS_")
}

// WriteRoots are the paths commands may write as the backends see them on
// the host: the writable roots and the project's build cache.
func (p *Policy) WriteRoots() []string {
	out := append([]string(nil), p.writable...)
	if p.cache != "" {
		out = append(out, p.cache)
	}
	return out
}

// cacheEnv sets the build tools' cache variables to the project's cache.
func cacheEnv(p *Policy, set func(k, v string)) {
	c := p.cache
	set("XDG_CACHE_HOME", c+"/xdg")
	set("GOCACHE", c+"/go-build")
	set("GOMODCACHE", c+"/go-mod")
	// Module files are read-only by default, which would make the cache
	// hard to clean; nothing outside this project's walls uses them.
	flags := "-modcacherw"
	for _, kv := range p.env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok && strings.TrimSpace(v) != "" {
			flags = strings.TrimSpace(v) + " " + flags
		}
	}
	set("GOFLAGS", flags)
	if p.hostModCache != "" {
		proxy := p.hostGoProxy
		if proxy == "" {
			proxy = "https://proxy.golang.org,direct"
		}
		set("GOPROXY", "file://"+filepath.ToSlash(filepath.Join(p.hostModCache, "cache", "download"))+","+proxy)
	}
	set("npm_config_cache", c+"/npm")
	set("PIP_CACHE_DIR", c+"/pip")
	set("CARGO_HOME", c+"/cargo")
	set("CARGO_TARGET_DIR", c+"/cargo-target")
	for _, v := range p.cacheVars {
		set(v, c+"/vars/"+v)
	}
}

// CacheEntry is one project's build cache, as `harness cache` lists it.
type CacheEntry struct {
	Dir     string // the cache's directory (what Clean removes)
	Project string // the project it belongs to, as recorded when it was made
	Bytes   int64  // size of the regular files beneath it
	Files   int
}

// ListCaches lists the project caches under root, largest first.
func ListCaches(root string) ([]CacheEntry, error) {
	ents, err := os.ReadDir(filepath.Join(root, "projects"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CacheEntry
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, "projects", e.Name())
		ce := CacheEntry{Dir: dir}
		if b, err := os.ReadFile(filepath.Join(dir, "project")); err == nil {
			ce.Project = strings.TrimSpace(string(b))
		}
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				ce.Bytes += fi.Size()
				ce.Files++
			}
			return nil
		})
		out = append(out, ce)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out, nil
}

// ProjectCache is the directory of project's cache under root (which may
// not exist).
func ProjectCache(root, project string) string {
	if c, err := canonical(project); err == nil {
		project = c
	}
	return projectCacheDir(root, project)
}

// CleanCache removes one project's cache directory (a directory ListCaches
// or ProjectCache named). Directories made read-only inside (Go's module
// cache) are made writable first; symlinks are removed, never followed.
func CleanCache(root, dir string) error {
	if !Within(dir, filepath.Join(root, "projects")) || dir == filepath.Join(root, "projects") {
		return fmt.Errorf("%s is not a harness project cache under %s", dir, root)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
