package sandbox

import (
	"encoding/json"
	"fmt"
	"os/exec"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"golang.org/x/sys/unix"
)

// openLandlock is the backend for Linux without bwrap: the inner stage
// alone, started as the init of fresh user, mount and PID namespaces when
// the kernel allows them (then carve-outs are read-only bind mounts and
// /tmp is private), and as a plain process group otherwise.
func openLandlock(live *walls.Live, tmp string, o openOptions) (*instance, error) {
	s, err := buildLandlock(live, tmp, o, false)
	if err != nil {
		return nil, err
	}
	if s.ro, err = buildLandlock(live, tmp, o, true); err != nil {
		return nil, err
	}
	return s, nil
}

// buildLandlock builds the landlock backend; ro is its read-only variant
// (see buildBwrap).
func buildLandlock(live *walls.Live, tmp string, o openOptions, ro bool) (*instance, error) {
	p := live.Policy() // for what never changes in a session: roots, bounds, environment
	abi := inner.LandlockABI()
	if abi < 1 {
		return nil, fmt.Errorf("%w: this kernel has no Landlock (not built in or not in the lsm= list); install bubblewrap for the bwrap backend", ErrUnavailable)
	}
	exe, _, err := backend.HelperExe(p.CommandsCanWrite)
	if err != nil {
		return nil, err
	}
	cfg := inner.HelperConfig{DenySockets: "all", NoNet: true, DropCaps: true, RequireLandlock: true, MaxProcs: o.cg.NprocRlimit(p.MaxProcs()), MaxData: p.MaxMemory(), Place: o.cg.PlacesSupervisors()}
	s := &instance{name: BackendLandlock, live: live, tmp: tmp, tree: treeGroup, helper: exe}
	tmpInside := tmp
	if userNamespaces() {
		s.tree = treeUserPID
		tmpInside = "/tmp"
		cfg.Tmp = tmp
		cfg.RORoot = true
		if !ro {
			gs, err := gitshadow.Open(p, tmp)
			if err != nil {
				return nil, err
			}
			s.git = gs
			cfg.Git = gs.Mounts()
		}
		cfg.Mask = p.MaskPaths()
		for _, w := range p.WriteRoots() {
			if walls.Within(w, "/tmp") {
				cfg.Rebind = append(cfg.Rebind, w)
			}
		}
		if walls.Within(exe, "/tmp") {
			cfg.Helper, s.helper = exe, inner.HelperInTmp
		}
	}
	if s.tree == treeUserPID && o.proxy != nil {
		// A network namespace of the sandbox's own (the launcher's, or
		// each command's without it), holding only loopback, where the
		// launcher or the inner stage listens for the proxy
		// (proxy_linux.go). The namespace is the network wall, as it is
		// bwrap's: nothing in it leads out but the proxy and the
		// forwarded loopback ports, so commands may make TCP sockets,
		// connect and bind there, and a dev server started in the
		// background answers later commands on localhost. Landlock's TCP
		// rules stay off: they name a port, not an address, and would
		// only forbid the sandbox's own loopback.
		// Without user namespaces there is no network namespace, and no
		// proxy: a command allowed to connect to the proxy's port could
		// connect to that port on any host. There the seccomp filter
		// denies socket() for every family and Landlock every TCP
		// bind and connect.
		s.proxy = o.proxy
		cfg.NoNet = false
		cfg.ProxyPort, cfg.ConnectPort, cfg.DenySockets = netproxy.ProxyPort, netproxy.ProxyPort, "unix"
		cfg.Forward = o.proxy.LoopbackPorts()
		s.own = func(cmd *exec.Cmd, noNet bool) (func(), error) {
			cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWNET
			return ownProxy(proxyFor(o.proxy, noNet), cmd)
		}
	}
	// Without a mount namespace nothing holds chmod, chown, utime and
	// xattr changes outside the writable roots: seccomp denies them all.
	cfg.DenyMeta = s.tree != treeUserPID
	cfg.Write = append(append(p.WriteRootsFor(ro), tmpInside), s.git.WritePaths()...)
	env := walls.SandboxEnv(p, tmpInside, BackendLandlock)
	if s.proxy != nil {
		env = append(env, netproxy.ProxyEnv(netproxy.ProxyPort)...)
	}
	// now is cfg with the carve-outs of snapshot snap (a repository
	// created mid-session is mounted read-only from the next sandbox on).
	now := func(snap *walls.Policy) inner.HelperConfig {
		c := cfg
		if s.tree == treeUserPID {
			c.ReadOnly = snap.RoBinds()
			if ro {
				c.ReadOnly = append(c.ReadOnly, snap.Writable()...)
			}
			c.Keep = snap.KeepReadable()
		}
		return c
	}
	s.wrap = func(script, dir string) ([]string, []string, error) {
		h, err := inner.HelperArgv(exe, now(live.Policy()), "/bin/sh", "-c", script)
		return h, env, err
	}
	if s.tree == treeUserPID {
		// The launcher is the init of the namespaces: it mounts, drops its
		// capabilities and serves; without them there is no PID namespace
		// to hold a command's tree, and each command keeps its own helper.
		s.launch = &launcher{backend: BackendLandlock, tree: treeUserPID, pol: live, proxy: s.proxy, netns: s.proxy != nil, newCmd: func(snap *walls.Policy) *exec.Cmd {
			lcfg, _ := json.Marshal(now(snap)) // plain strings, bools and numbers: cannot fail
			c := exec.Command(exe, inner.LauncherArg, string(lcfg))
			c.Dir, c.Env = p.Project(), env
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
