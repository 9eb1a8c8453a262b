package sandbox

import (
	"encoding/json"
	"fmt"
	"os/exec"

	"golang.org/x/sys/unix"
)

// openLandlock is the backend for Linux without bwrap: the inner stage
// alone, started as the init of fresh user, mount and PID namespaces when
// the kernel allows them (then carve-outs are read-only bind mounts and
// /tmp is private), and as a plain process group otherwise.
func openLandlock(p *Policy, tmp string, o openOptions) (*instance, error) {
	s, err := buildLandlock(p, tmp, o, false)
	if err != nil {
		return nil, err
	}
	if s.ro, err = buildLandlock(p, tmp, o, true); err != nil {
		return nil, err
	}
	return s, nil
}

// buildLandlock builds the landlock backend; ro is its read-only variant
// (see buildBwrap).
func buildLandlock(p *Policy, tmp string, o openOptions, ro bool) (*instance, error) {
	abi := LandlockABI()
	if abi < 1 {
		return nil, fmt.Errorf("%w: this kernel has no Landlock (not built in or not in the lsm= list); install bubblewrap for the bwrap backend", ErrUnavailable)
	}
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	cfg := helperConfig{DenySockets: "all", NoNet: true, DropCaps: true, RequireLandlock: true, MaxProcs: o.cg.nprocRlimit(p.MaxProcs), MaxData: p.MaxMemory, Place: o.cg.placesSupervisors()}
	s := &instance{name: BackendLandlock, pol: p, tmp: tmp, tree: treeGroup, helper: exe}
	tmpInside := tmp
	if userNamespaces() {
		s.tree = treeUserPID
		tmpInside = "/tmp"
		cfg.Tmp = tmp
		cfg.RORoot = true
		if !ro {
			gs, err := openGitShadows(p, tmp)
			if err != nil {
				return nil, err
			}
			s.git = gs
			cfg.Git = gs.mounts()
		}
		cfg.Mask = p.maskPaths()
		for _, w := range p.writeRoots() {
			if within(w, "/tmp") {
				cfg.Rebind = append(cfg.Rebind, w)
			}
		}
		if within(exe, "/tmp") {
			cfg.Helper, s.helper = exe, helperInTmp
		}
	}
	if s.tree == treeUserPID && o.proxy != nil {
		// A network namespace of the sandbox's own (the launcher's, or
		// each command's without it), holding only loopback, where the
		// launcher or the inner stage listens for the proxy
		// (proxy_linux.go): commands may make TCP sockets there, and
		// Landlock lets them connect to that one port only, and bind none.
		// Without user namespaces there is no network namespace, and no
		// proxy: Landlock's network rules name a port, not an address, so
		// a command allowed to connect to the proxy's port could connect
		// to that port on any host. There the seccomp filter denies
		// socket() for every family instead.
		s.proxy = o.proxy
		cfg.ProxyPort, cfg.ConnectPort, cfg.DenySockets = ProxyPort, ProxyPort, "unix"
		cfg.Forward = o.proxy.loopbackPorts()
		s.own = func(cmd *exec.Cmd) (func(), error) {
			cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWNET
			return ownProxy(o.proxy, cmd)
		}
	}
	// Without a mount namespace nothing holds chmod, chown, utime and
	// xattr changes outside the writable roots: seccomp denies them all.
	cfg.DenyMeta = s.tree != treeUserPID
	cfg.Write = append(append(p.writeRootsFor(ro), tmpInside), s.git.writePaths()...)
	env := sandboxEnv(p, tmpInside, BackendLandlock)
	if s.proxy != nil {
		env = append(env, proxyEnv(ProxyPort)...)
	}
	// now is cfg with the carve-outs as they stand (a repository created
	// mid-session is mounted read-only from the next sandbox on).
	now := func() helperConfig {
		c := cfg
		if s.tree == treeUserPID {
			c.ReadOnly = p.roBinds()
			if ro {
				c.ReadOnly = append(c.ReadOnly, p.Writable...)
			}
			c.Keep = p.keepNow()
		}
		return c
	}
	s.wrap = func(script, dir string) ([]string, []string, error) {
		h, err := helperArgv(exe, now(), "/bin/sh", "-c", script)
		return h, env, err
	}
	if s.tree == treeUserPID {
		// The launcher is the init of the namespaces: it mounts, drops its
		// capabilities and serves; without them there is no PID namespace
		// to hold a command's tree, and each command keeps its own helper.
		s.launch = &launcher{backend: BackendLandlock, tree: treeUserPID, pol: p, proxy: s.proxy, netns: s.proxy != nil, newCmd: func() *exec.Cmd {
			lcfg, _ := json.Marshal(now()) // plain strings, bools and numbers: cannot fail
			c := exec.Command(exe, launcherArg, string(lcfg))
			c.Dir, c.Env = p.Project, env
			return c
		}}
	}
	return s, nil
}

// noUserNamespaces, set only by tests, makes the landlock backend behave
// as on a kernel that forbids user namespaces.
var noUserNamespaces bool

// userNamespaces reports whether this process may create user, mount and
// PID namespaces (some distributions forbid it to unprivileged users).
func userNamespaces() bool {
	if noUserNamespaces {
		return false
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = procAttr(treeUserPID)
	return cmd.Run() == nil
}
