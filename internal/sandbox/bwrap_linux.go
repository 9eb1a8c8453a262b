package sandbox

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// openBwrap builds the bwrap argv once per session; each command then adds
// its working directory and script.
func openBwrap(live *walls.Live, tmp string, o openOptions) (*instance, error) {
	s, err := buildBwrap(live, tmp, o, false)
	if err != nil {
		return nil, err
	}
	if s.ro, err = buildBwrap(live, tmp, o, true); err != nil {
		return nil, err
	}
	return s, nil
}

// buildBwrap builds the bwrap backend; ro is the read-only variant
// (Cmd.ReadOnly): the writable roots bound read-only, only the private
// /tmp and the build cache writable, no git writes.
func buildBwrap(live *walls.Live, tmp string, o openOptions, ro bool) (*instance, error) {
	p := live.Policy() // for what never changes in a session: roots, bounds, environment
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: bwrap not found in PATH: install bubblewrap (apt-get install bubblewrap)", ErrUnavailable)
	}
	exe, _, err := backend.HelperExe(p.CommandsCanWrite)
	if err != nil {
		return nil, err
	}
	userns := bwrapHas(bw, "--disable-userns")
	innerExe := exe
	if walls.Within(exe, "/tmp") {
		innerExe = inner.HelperInTmp
	}
	env := walls.SandboxEnv(p, "/tmp", BackendBwrap)
	if o.proxy != nil {
		env = append(env, netproxy.ProxyEnv(netproxy.ProxyPort)...)
	}
	var gs *gitshadow.Session
	if !ro {
		if gs, err = gitshadow.Open(p, tmp); err != nil {
			return nil, err
		}
	}
	// outer is bwrap's argv up to the command, built anew from the
	// current snapshot for each sandbox and each launcher, so carve-outs
	// the policy gained since the last (a repository created mid-session)
	// are mounted read-only.
	outer := func(p *walls.Policy, env []string) []string {
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
		if innerExe != exe {
			args = append(args, "--ro-bind", exe, innerExe)
		}
		for _, w := range p.WriteRoots() {
			if ro && p.IsWritableRoot(w) {
				args = append(args, "--ro-bind", w, w)
				continue
			}
			args = append(args, "--bind", w, w)
		}
		for _, r := range p.RoBinds() {
			args = append(args, "--ro-bind", r, r)
		}
		args = append(args, gs.BwrapArgs()...)
		args = append(args, maskArgs(p.MaskPaths(), p.KeepReadable())...)
		args = append(args, "--clearenv")
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			args = append(args, "--setenv", k, v)
		}
		return args
	}
	cfg := inner.HelperConfig{Write: append(append(p.WriteRootsFor(ro), "/tmp"), gs.WritePaths()...), DenySockets: "unix", MaxProcs: o.cg.NprocRlimit(p.MaxProcs()), MaxData: p.MaxMemory(), Place: o.cg.PlacesSupervisors()}
	if o.proxy != nil {
		// The launcher, or a sandbox's own inner stage, listens there
		// (proxy_linux.go); bwrap's network namespace holds the rest.
		cfg.ProxyPort = netproxy.ProxyPort
		cfg.Forward = o.proxy.LoopbackPorts()
	}
	s := &instance{name: BackendBwrap, live: live, tmp: tmp, tree: treeGroup, helper: innerExe, git: gs, proxy: o.proxy}
	if o.proxy != nil {
		s.own = func(cmd *exec.Cmd, noNet bool) (func(), error) { return ownProxy(proxyFor(o.proxy, noNet), cmd) }
	}
	s.wrap = func(script, dir string) ([]string, []string, error) {
		argv := append(outer(live.Policy(), env), "--chdir", dir, "--")
		h, err := inner.HelperArgv(innerExe, cfg, "/bin/sh", "-c", script)
		if err != nil {
			return nil, nil, err
		}
		return append(argv, h...), env, nil
	}
	lcfg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	s.launch = &launcher{backend: BackendBwrap, tree: treeGroup, pol: live, proxy: o.proxy, newCmd: func(snap *walls.Policy) *exec.Cmd {
		argv := append(outer(snap, env), "--chdir", p.Project(), "--", innerExe, inner.LauncherArg, string(lcfg))
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env = p.Project(), env
		return c
	}}
	return s, nil
}

// maskArgs hides paths: a directory behind an empty read-only tmpfs, a
// file or socket behind /dev/null. A kept path under a hidden directory
// (the session's own spill directory) is bound back, read-only, on top.
func maskArgs(paths, keep []string) []string {
	var args []string
	for _, m := range inner.MaskTargets(paths) {
		if !m.Dir {
			args = append(args, "--ro-bind", "/dev/null", m.Path)
			continue
		}
		var kept []string
		for _, k := range keep {
			if walls.Within(k, m.Path) && k != m.Path && backend.Exists(k) {
				kept = append(kept, "--ro-bind", k, k)
			}
		}
		perms := "0000"
		if kept != nil {
			perms = "0111" // searchable, not listable: only the kept path is reached
		}
		args = append(args, "--perms", perms, "--tmpfs", m.Path)
		args = append(args, kept...)
		args = append(args, "--remount-ro", m.Path)
	}
	return args
}

func bwrapHas(bw, flag string) bool {
	out, _ := exec.Command(bw, "--help").CombinedOutput()
	return strings.Contains(string(out), flag)
}
