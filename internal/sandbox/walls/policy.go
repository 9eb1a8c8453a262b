package walls

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Policy is the set of walls for one session at one moment: an immutable
// snapshot, computed first by NewPolicy; a Live (live.go) holds a
// session's current one and replaces it whole when the rules change.
// Other packages read it through its methods (access.go).
type Policy struct {
	project      string        // canonical project root
	writable     []string      // writable roots: project first, then --add-dir roots
	readOnly     []string      // carve-outs inside writable roots (existing paths, canonical)
	protected    []string      // paths watched for tampering: readOnly plus carve-outs that do not exist yet
	denyRead     []string      // secrets: never readable (as given and, for symlinks, resolved)
	keepReadable []string      // beneath a denyRead directory, still readable: this session's spill directory
	sockets      []string      // known host sockets (or their directories) masked inside the sandbox
	allowEnv     []string      // names of environment variables passed through
	env          []string      // NAME=value pairs passed to commands (allowlisted, never a secret)
	home         string        // the user's home directory (may be empty)
	timeout      time.Duration // default per-command timeout
	outputLimit  int           // bytes of output kept per command
	tempDir      string        // host path of the session's private /tmp (Live.SetTempDir)
	notes        []string      // things the policy could not do, said plainly (e.g. a truncated scan)
	// maxProcs and maxMemory bound the commands (0: no bound); see bounds.go.
	maxProcs     int
	maxMemory    int64
	cache        string   // the project's persistent build cache, writable inside (cache.go); "": caches die with the private /tmp
	cacheVars    []string // extra variables pointed at directories in cache
	hostModCache string   // the host's Go module cache, read-only inside
	hostGoProxy  string   // the host's GOPROXY, kept behind the read-only file:// entry
	// gitWrite are the project's own git directories whose data commands
	// may write and whose objects they may add to (package gitshadow).
	gitWrite    []GitDir
	loopbackTCP bool // macOS: commands may use TCP on localhost (Linux always has a private loopback)

	projectRO bool      // plan mode: see planmode.go
	findings  []Finding // what Refresh found mid-session, in order
	gen       int       // times the carve-outs grew (Generation)

	fsys fileSystem // nil: the real one (see identity.go)
	// idents memoises the roots' identities; a cache, not a rule, shared
	// by every snapshot of a session (identity.go).
	idents *rootIDs
	// seed is the tree watch NewPolicy's scan filled; NewLive starts from
	// a copy, so its first Refresh reads only what changed since.
	seed *treeWatch
}

// PolicyOptions are the inputs of NewPolicy.
type PolicyOptions struct {
	Project     string
	AddDirs     []string
	Home        string
	Timeout     time.Duration
	OutputLimit int      // 0 means 1 MiB
	Environ     []string // the host environment to filter (what passes, the host's Go module cache); nil is none
	// CacheRoot, when set, holds the project's persistent build cache
	// (CacheRoot(home, environ) in production; empty in most tests).
	CacheRoot string
	// Hide adds paths to the secrets (the caller's own stores: every
	// session's spill files); Keep are paths beneath them that stay
	// readable (this session's spill directory).
	Hide, Keep []string
	// LoopbackTCP lets commands use TCP on localhost where the loopback is
	// the host's (macOS); also set by HARNESS_SANDBOX_LOOPBACK=1 in Environ.
	LoopbackTCP bool
	// UnfilteredEnv are NAME=value pairs passed to commands as given,
	// past the allowlist: a test's knob for what it runs inside (a
	// supervisor told to stall). Production leaves it empty.
	UnfilteredEnv []string
}

// HiddenListFile, under the home directory, lists more paths to hide from
// commands and the file tools, one a line (~/ for the home directory, #
// for a comment). Commands cannot change it: the home directory is
// read-only inside the walls.
const HiddenListFile = ".agents/hidden"

// DefaultTimeout is the per-command timeout when the options give none.
const DefaultTimeout = 60 * time.Second

// secretPaths are read-denied, relative to the home directory.
var secretPaths = []string{
	".ssh", ".aws", ".gnupg", ".config/gh", ".kube", ".docker", ".netrc",
	".git-credentials", ".agents/env", ".config/gcloud", ".azure", ".npmrc",
	".pypirc", ".config/hub", ".password-store", ".local/share/keyrings",
	".config/op", ".vault-token", ".terraform.d/credentials.tfrc.json",
	".cargo/credentials", ".cargo/credentials.toml", ".config/anthropic",
	".config/openai", ".pgpass", ".my.cnf",
	// other agents' and tools' logins and histories beyond storePaths
	".config/gemini", ".zhistory", ".histfile", ".viminfo",
	// every session's log (a secret leaked once would stay readable)
	".agents/sessions",
	// remote MCP servers' OAuth tokens (package mcp)
	".agents/mcp-auth.json",
}

// systemDirs may never be a project or a writable root.
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
	"/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
	"/var/tmp", "/home", "/Users", "/System", "/Library", "/Applications",
	"/private", "/private/tmp", "/private/var", "/Volumes", "/mnt", "/media",
}

// envAllow names the variables a command may see, by exact name.
var envAllow = []string{
	"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES",
	"LC_NUMERIC", "LC_TIME", "LC_MONETARY", "LC_PAPER", "LC_NAME", "LC_ADDRESS",
	"LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION", "TERM", "COLORTERM", "NO_COLOR", "USER",
	"LOGNAME", "SHELL", "TZ", "HOME", "EDITOR", "PAGER", "GOROOT", "GOFLAGS",
	"GOTOOLCHAIN", "GOPRIVATE", "CGO_ENABLED", "CC", "CXX", "JAVA_HOME",
	"RUSTUP_HOME", "VIRTUAL_ENV", "NODE_PATH",
}

// secretWords mark a variable as a secret even when its name is allowlisted.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE_"}

// NewPolicy computes the policy for a project. It refuses a project that is
// the filesystem root, the home directory (or one of its ancestors) or a
// system directory, and fails closed on a symlink at a protected path.
func NewPolicy(o PolicyOptions) (*Policy, error) {
	home := ""
	if o.Home != "" {
		h, err := canonical(o.Home)
		if err != nil {
			return nil, fmt.Errorf("home %s: %w", o.Home, err)
		}
		home = h
	}
	proj, err := checkRoot(o.Project, home)
	if err != nil {
		return nil, err
	}
	p := &Policy{
		project:     proj,
		writable:    []string{proj},
		home:        home,
		timeout:     o.Timeout,
		outputLimit: o.OutputLimit,
		allowEnv:    envAllow,
		idents:      &rootIDs{},
		seed:        &treeWatch{},
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.outputLimit <= 0 {
		p.outputLimit = 1 << 20
	}
	for _, d := range o.AddDirs {
		r, err := checkRoot(d, home)
		if err != nil {
			return nil, fmt.Errorf("--add-dir: %w", err)
		}
		p.writable = append(p.writable, r)
	}
	hide := append([]string(nil), o.Hide...)
	if home != "" {
		for _, s := range append(append([]string(nil), secretPaths...), storePaths...) {
			hide = append(hide, filepath.Join(home, filepath.FromSlash(s)))
		}
		hide = append(hide, hiddenList(home)...)
	}
	for _, path := range hide {
		path = filepath.Clean(path)
		p.denyRead = AppendUnique(p.denyRead, path)
		if r, err := filepath.EvalSymlinks(path); err == nil && r != path {
			p.denyRead = AppendUnique(p.denyRead, r)
		}
	}
	for _, k := range o.Keep {
		p.keepReadable = AppendUnique(p.keepReadable, filepath.Clean(k))
		if r, err := filepath.EvalSymlinks(k); err == nil {
			p.keepReadable = AppendUnique(p.keepReadable, r)
		}
	}
	for _, w := range p.writable {
		for _, d := range p.denyRead {
			if Within(w, d) || Within(d, w) {
				return nil, fmt.Errorf("writable root %s overlaps the secret path %s: pick a directory that holds no credentials", w, d)
			}
		}
		if err := p.scanCarveOuts(w); err != nil {
			return nil, err
		}
	}
	p.hideLinkTargets()
	p.gitWrite = p.gitWrites()
	if p.maxProcs, p.maxMemory, err = bounds(environ(o.Environ)); err != nil {
		return nil, err
	}
	p.sockets = hostSockets(o.Environ)
	p.loopbackTCP = o.LoopbackTCP || HasEnv(environ(o.Environ), LoopbackEnv+"=1")
	p.env = append(filterEnv(environ(o.Environ)), o.UnfilteredEnv...)
	p.hostModCache, p.hostGoProxy = hostGo(p, environ(o.Environ))
	if o.CacheRoot != "" {
		var vars []string
		for _, kv := range environ(o.Environ) {
			if v, ok := strings.CutPrefix(kv, CacheVarsEnv+"="); ok {
				vars = strings.Split(v, ",")
			}
		}
		if err := p.setupCache(o.CacheRoot, vars); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func environ(e []string) []string { return e }

// checkRoot canonicalises a writable root and refuses dangerous ones.
func checkRoot(dir, home string) (string, error) {
	if dir == "" {
		return "", errors.New("no project directory given: pass --project DIR")
	}
	c, err := canonical(dir)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	st, err := os.Stat(c)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("project %s is not a directory: pass a directory with --project", dir)
	}
	refuse := c == filepath.Dir(c) // the filesystem root
	if home != "" && (c == home || Within(home, c)) {
		refuse = true
	}
	for _, s := range systemDirs {
		if c == s {
			refuse = true
		}
	}
	if runtime.GOOS != "windows" && (Within(c, "/proc") || Within(c, "/sys") || Within(c, "/dev")) {
		refuse = true
	}
	if refuse {
		return "", fmt.Errorf("refusing to make %s writable: it is the root, the home directory or a system directory; pick a project directory with --project", c)
	}
	return c, nil
}

// canonical returns the absolute path with every symlink resolved.
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// scanCarveOuts finds every .git (directory or pointer file) beneath root,
// the gitdirs they name, core.hooksPath targets and root/.agents.
func (p *Policy) scanCarveOuts(root string) error {
	agents := filepath.Join(root, ".agents")
	// The project's harness config (permission rules, skills) must exist to
	// be mounted read-only: were it missing, a command could create it and
	// grant the agent rules for its next session. An empty directory is
	// invisible to git. (Extra --add-dir roots are left as they are.)
	if root == p.project {
		if err := os.Mkdir(agents, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s (kept read-only for the agent): %w", agents, err)
		}
	}
	if err := p.protect(agents); err != nil {
		return err
	}
	// The whole tree, however large: what this walk does not see is
	// not protected. It also seeds the watch Refresh looks again with.
	return p.seed.walk(root, func(path string, d fs.DirEntry) (bool, error) {
		if d.Name() != ".git" {
			return false, nil
		}
		return true, p.protectGit(path)
	})
}

// protect adds a carve-out to a policy being built (by NewPolicy, or by
// Live for its next snapshot): never to a published one. A symlink there
// fails closed.
func (p *Policy) protect(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.protected = AppendUnique(p.protected, path)
		return nil
	case err != nil:
		return fmt.Errorf("protected path %s: %w", path, err)
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink at a protected path; harness will not follow it: replace it with a real directory (or a gitdir pointer file) and retry", path)
	}
	p.readOnly = AppendUnique(p.readOnly, path)
	p.protected = AppendUnique(p.protected, path)
	return nil
}

// protectGit protects a .git entry, the gitdir it names and its hooksPath.
func (p *Policy) protectGit(dotgit string) error {
	if err := p.protect(dotgit); err != nil {
		return err
	}
	gitdir := dotgit
	st, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return nil
		}
		line, _, _ := strings.Cut(string(b), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return nil
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(dotgit), target)
		}
		c, err := canonical(target)
		if err != nil {
			return nil // a dangling pointer names nothing to protect
		}
		gitdir = c
		if err := p.protect(gitdir); err != nil {
			return err
		}
		// A worktree's gitdir names the shared repository in commondir.
		if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
			common := strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitdir, common)
			}
			if c, err := canonical(common); err == nil {
				if err := p.protect(c); err != nil {
					return err
				}
			}
		}
	}
	return p.protectGitDir(dotgit, gitdir)
}

// protectGitDir protects gitdir (already protected itself when it is a
// .git) and the hooks path its config names, relative to dotgit's parent.
func (p *Policy) protectGitDir(dotgit, gitdir string) error {
	if dotgit == gitdir && filepath.Base(gitdir) != ".git" {
		if err := p.protect(gitdir); err != nil {
			return err
		}
	}
	// Relative to where hooks run: the work tree, or a bare gitdir.
	base := filepath.Dir(dotgit)
	if dotgit == gitdir && filepath.Base(gitdir) != ".git" {
		base = gitdir
	}
	hooks := filepath.Join(gitdir, "hooks")
	if hp := hooksPath(filepath.Join(gitdir, "config")); hp != "" {
		if !filepath.IsAbs(hp) {
			hp = filepath.Join(base, hp)
		}
		hp = filepath.Clean(hp)
		hooks = hp
		for _, w := range p.writable {
			if Within(resolve(hp), w) {
				if err := p.ensureHooksPath(hp); err != nil {
					return err
				}
				if err := p.protect(hp); err != nil {
					return err
				}
				if r := resolve(hp); r != hp {
					p.readOnly = AppendUnique(p.readOnly, r)
				}
			}
		}
	}
	return p.protectDelegates(base, hooks)
}

// hooksPath reads core.hooksPath from a git config file (a small ini parse:
// enough for the key harness needs, no includes).
func hooksPath(config string) string {
	f, err := os.Open(config)
	if err != nil {
		return ""
	}
	defer f.Close()
	section, value := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(strings.Fields(line + " ")[0], "[]"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "hookspath") {
			value = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return value
}

// hostSockets lists well-known host daemon sockets to mask.
func hostSockets(env []string) []string {
	var out []string
	cands := []string{
		"/var/run/docker.sock", "/run/docker.sock", "/run/containerd", "/run/podman",
		"/run/dbus", "/var/run/dbus", "/run/user", "/run/systemd/private",
		"/run/systemd/journal", "/var/run/nscd", "/run/snapd.socket", "/tmp/.X11-unix",
	}
	for _, kv := range environ(env) {
		if v, ok := strings.CutPrefix(kv, "SSH_AUTH_SOCK="); ok && v != "" {
			cands = append(cands, v)
		}
	}
	for _, c := range cands {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			out = AppendUnique(out, r)
		}
	}
	return out
}

// filterEnv keeps allowlisted, non-secret variables.
func filterEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !envAllowed(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func envAllowed(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return false
		}
	}
	for _, a := range envAllow {
		if a == name {
			return true
		}
	}
	return false
}

func AppendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func Within(path, root string) bool {
	if root == string(filepath.Separator) {
		return filepath.IsAbs(path)
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// hiddenList reads HiddenListFile.
func hiddenList(home string) []string {
	b, err := os.ReadFile(filepath.Join(home, filepath.FromSlash(HiddenListFile)))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case line == "~":
			continue // never the whole home: nothing would work
		case strings.HasPrefix(line, "~/"):
			line = filepath.Join(home, filepath.FromSlash(line[2:]))
		case !filepath.IsAbs(line):
			line = filepath.Join(home, filepath.FromSlash(line))
		}
		out = append(out, line)
	}
	return out
}

// MaskPaths are what the backends hide: the secrets and host sockets.
func (p *Policy) MaskPaths() []string {
	return append(append([]string(nil), p.denyRead...), p.sockets...)
}

// kept reports whether l lies beneath a KeepReadable path inside the
// hidden directory d (the session's own spill directory).
func (p *Policy) kept(l located, d string) bool {
	for _, k := range p.keepReadable {
		if Within(k, d) && k != d && p.under(l, k, false) {
			return true
		}
	}
	return false
}

// CheckRead refuses secrets. The path is checked as written and with every
// symlink resolved, so neither a link to a secret nor ../ gets through, and
// by identity (identity.go), so neither a case variant nor a firmlink does.
func (p *Policy) CheckRead(path string) error {
	return p.checkRead(path, path, nil)
}

// checkRead decides a read of path (name is what the caller asked for, for
// the message); id is the opened file's identity when known.
func (p *Policy) checkRead(name, path string, id *fileID) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l := p.locate(path, id)
	l.spellings = AppendUnique(l.spellings, abs)
	for _, d := range p.denyRead {
		if p.under(l, d, true) && !p.kept(l, d) {
			return denied(name, "%s is a protected secret path (%s); harness never reads it", name, d)
		}
	}
	for _, cand := range l.spellings {
		if procPrivate(cand) {
			return fmt.Errorf("%s is a process's private /proc entry (environment, memory, magic links); read the file by its real path", name)
		}
	}
	return nil
}

// CheckWrite refuses paths outside the writable roots or inside a carve-out
// (any .git directory included, in any case), after resolving every
// symlink, and by identity as CheckRead does.
func (p *Policy) CheckWrite(path string) error {
	return p.checkWrite(path, path, nil)
}

func (p *Policy) checkWrite(name, path string, id *fileID) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if magicProc(abs) {
		return fmt.Errorf("%s goes through /proc; write the file by its real path inside the project", name)
	}
	grant := p.locate(path, id)
	if err := p.planDenied(name, grant); err != nil {
		return err
	}
	return p.wallsWrite(name, abs, grant)
}

// wallsWrite is checkWrite's answer whatever the mode: the carve-outs,
// secrets and writable roots.
func (p *Policy) wallsWrite(name, abs string, grant located) error {
	deny := grant
	deny.spellings = AppendUnique(append([]string(nil), grant.spellings...), abs)
	for _, r := range slices.Concat(p.protected, p.readOnly) {
		if p.under(deny, r, true) {
			return denied(name, "%s is read-only: %s is protected by the sandbox policy", name, r)
		}
	}
	for _, d := range p.denyRead {
		if p.under(deny, d, true) {
			return fmt.Errorf("%s is a protected secret path; harness never touches it", name)
		}
	}
	for _, root := range p.writable {
		if !p.under(grant, root, false) {
			continue
		}
		for _, s := range deny.spellings {
			if ls, lr := FoldKey(s), FoldKey(root); Within(ls, lr) && hasGitComponent(ls[len(lr):]) {
				return fmt.Errorf("%s is inside a .git directory, which is read-only under the sandbox policy", name)
			}
		}
		return nil
	}
	return fmt.Errorf("%s is outside the writable roots (%s): only the project is writable", name, strings.Join(p.writable, ", "))
}

// magicProc reports paths under /proc or /dev/fd, whose symlinks
// (/proc/self/root, /proc/<pid>/cwd, fd/N) lead anywhere: never a write target.
func magicProc(path string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	return Within(path, "/proc") || Within(path, "/dev/fd")
}

// procPrivate reports /proc/<pid>/… and /proc/self/…: a process's
// environment (the harness's holds API keys), memory and magic links.
// System-wide entries such as /proc/cpuinfo stay readable.
func procPrivate(path string) bool {
	if runtime.GOOS != "linux" || !Within(path, "/proc") {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/proc"), "/")
	first, _, _ := strings.Cut(rest, "/")
	if first == "self" || first == "thread-self" {
		return true
	}
	return first != "" && strings.Trim(first, "0123456789") == ""
}

// resolve is resolveFS on the real file system.
func resolve(path string) string { return resolveFS(osFS{}, path) }

// LoopbackEnv, set to 1, lets sandboxed commands use TCP on localhost on
// macOS, where there is no private loopback: every process of the user
// listening there is then reachable.
const LoopbackEnv = "HARNESS_SANDBOX_LOOPBACK"
