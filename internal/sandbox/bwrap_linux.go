package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// helperInTmp is where the harness binary is bound inside bwrap when its
// host path is under /tmp (which the private /tmp hides), as with go test.
const helperInTmp = "/tmp/.harness-helper"

// openBwrap builds the bwrap argv once per session; each command then adds
// its working directory and script.
func openBwrap(p *Policy, tmp string, o openOptions) (*instance, error) {
	s, err := buildBwrap(p, tmp, o, false)
	if err != nil {
		return nil, err
	}
	if s.ro, err = buildBwrap(p, tmp, o, true); err != nil {
		return nil, err
	}
	return s, nil
}

// buildBwrap builds the bwrap backend; ro is the read-only variant
// (Cmd.ReadOnly): the writable roots bound read-only, only the private
// /tmp and the build cache writable, no git writes.
func buildBwrap(p *Policy, tmp string, o openOptions, ro bool) (*instance, error) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: bwrap not found in PATH: install bubblewrap (apt-get install bubblewrap)", ErrUnavailable)
	}
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	userns := bwrapHas(bw, "--disable-userns")
	inner := exe
	if within(exe, "/tmp") {
		inner = helperInTmp
	}
	env := sandboxEnv(p, "/tmp", BackendBwrap)
	if o.proxy != nil {
		env = append(env, proxyEnv(ProxyPort)...)
	}
	var gs *gitSession
	if !ro {
		if gs, err = openGitShadows(p, tmp); err != nil {
			return nil, err
		}
	}
	// outer is bwrap's argv up to the command, built anew for each
	// sandbox and each launcher, so carve-outs the policy gained since the
	// last (a repository created mid-session) are mounted read-only.
	outer := func(env []string) []string {
		args := []string{bw,
			"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
			"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		}
		if userns {
			args = append(args, "--disable-userns")
		}
		args = append(args,
			"--ro-bind", "/", "/",
			"--dev", "/dev",
			"--proc", "/proc",
			"--bind", tmp, "/tmp",
		)
		if inner != exe {
			args = append(args, "--ro-bind", exe, inner)
		}
		for _, w := range p.writeRoots() {
			if ro && p.isWritableRoot(w) {
				args = append(args, "--ro-bind", w, w)
				continue
			}
			args = append(args, "--bind", w, w)
		}
		for _, r := range p.roBinds() {
			args = append(args, "--ro-bind", r, r)
		}
		args = append(args, gs.bwrapArgs()...)
		args = append(args, maskArgs(p.maskPaths(), p.keepNow())...)
		args = append(args, "--clearenv")
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			args = append(args, "--setenv", k, v)
		}
		return args
	}
	cfg := helperConfig{Write: append(append(p.writeRootsFor(ro), "/tmp"), gs.writePaths()...), DenySockets: "unix", MaxProcs: o.cg.nprocRlimit(p.MaxProcs), MaxData: p.MaxMemory, Place: o.cg.placesSupervisors()}
	if o.proxy != nil {
		// The launcher, or a sandbox's own inner stage, listens there
		// (proxy_linux.go); bwrap's network namespace holds the rest.
		cfg.ProxyPort = ProxyPort
		cfg.Forward = o.proxy.loopbackPorts()
	}
	s := &instance{name: BackendBwrap, pol: p, tmp: tmp, tree: treeGroup, helper: inner, git: gs, proxy: o.proxy}
	if o.proxy != nil {
		s.own = func(cmd *exec.Cmd) (func(), error) { return ownProxy(o.proxy, cmd) }
	}
	s.wrap = func(script, dir string) ([]string, []string, error) {
		argv := append(outer(env), "--chdir", dir, "--")
		h, err := helperArgv(inner, cfg, "/bin/sh", "-c", script)
		if err != nil {
			return nil, nil, err
		}
		return append(argv, h...), env, nil
	}
	lcfg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	s.launch = &launcher{backend: BackendBwrap, tree: treeGroup, pol: p, proxy: o.proxy, newCmd: func() *exec.Cmd {
		argv := append(outer(env), "--chdir", p.Project, "--", inner, launcherArg, string(lcfg))
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env = p.Project, env
		return c
	}}
	return s, nil
}

// maskArgs hides paths: a directory behind an empty read-only tmpfs, a
// file or socket behind /dev/null. A kept path under a hidden directory
// (the session's own spill directory) is bound back, read-only, on top.
func maskArgs(paths, keep []string) []string {
	var args []string
	for _, m := range maskTargets(paths) {
		if !m.dir {
			args = append(args, "--ro-bind", "/dev/null", m.path)
			continue
		}
		var kept []string
		for _, k := range keep {
			if within(k, m.path) && k != m.path && exists(k) {
				kept = append(kept, "--ro-bind", k, k)
			}
		}
		perms := "0000"
		if kept != nil {
			perms = "0111" // searchable, not listable: only the kept path is reached
		}
		args = append(args, "--perms", perms, "--tmpfs", m.path)
		args = append(args, kept...)
		args = append(args, "--remount-ro", m.path)
	}
	return args
}

type mask struct {
	path string
	dir  bool
}

// maskTargets canonicalises the paths to hide (mounts need real paths; a
// symlinked parent such as /var/run would make them fail) and drops the
// missing ones and the symlinks (whose targets are listed themselves).
func maskTargets(paths []string) []mask {
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
		out = append(out, mask{path: d, dir: st.IsDir()})
	}
	return out
}

func bwrapHas(bw, flag string) bool {
	out, _ := exec.Command(bw, "--help").CombinedOutput()
	return strings.Contains(string(out), flag)
}

func selfExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the harness executable for the sandbox helper: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}
