package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/engine"
)

// The container backend (docker, podman through its Docker-compatible
// socket) maps the same Policy onto an engine: one long-lived container
// per session, an exec per command. Nothing of the host is in the
// container but what the Policy makes visible:
//
//   - the writable roots (the project first) bind-mounted read-write at the
//     same paths, the carve-outs read-only on top, the git shadows as
//     bwrap mounts them, the hidden paths inside them masked (an empty
//     read-only tmpfs or /dev/null); hidden paths elsewhere are simply not
//     mounted;
//   - the session's private /tmp (a host directory, so it survives the
//     container being recreated when the carve-outs grow);
//   - the harness binary, read-only at Helper: it is the
//     container's init and each command's supervisor, and puts up the same
//     inner stage (Landlock, seccomp) as under bwrap;
//   - a read-only root filesystem (the image's), no network (--network
//     none), every capability dropped, no-new-privileges, a seccomp profile
//     with the inner stage's denials (containerSeccomp), pids and memory
//     limits, the environment allowlist.
//
// Each command is `docker exec harness __harness-container-exec`: a child
// subreaper that starts /bin/sh -c behind the inner stage in a new
// session with stdin at /dev/null, and kills every descendant when the
// command exits or when its own stdin (the exec's attached stream) ends,
// which is how the host times a command out or cancels it.

// Helper is where the harness binary is mounted in the container.
const Helper = "/.harness/harness"

// Container limits: what a runaway command (a fork bomb, a leak) hits
// before the machine does, for the whole container, besides the policy's
// per-command bounds (RLIMIT_NPROC, RLIMIT_DATA) that the inner stage sets.
const (
	containerMemory = 4 << 30
	containerPids   = 4096
	// pidsHeadroom is for the init and the supervisors, above the
	// policy's process bound.
	pidsHeadroom = 64
)

// containerResources: the cgroup limits of the session's container.
func containerResources(p *walls.Policy) container.Resources {
	mem, pids := int64(containerMemory), int64(containerPids)
	if p.MaxMemory() > mem {
		mem = p.MaxMemory()
	}
	if p.MaxProcs() > 0 {
		pids = int64(p.MaxProcs()) + pidsHeadroom
	}
	return container.Resources{Memory: mem, PidsLimit: &pids}
}

// containerLabel marks the containers a session starts, for cleanup
// (`docker rm -f $(docker ps -aq --filter label=dev.harness.sandbox)`).
const containerLabel = "dev.harness.sandbox"

// Open starts the session's engine side for the rules live gives: the
// client, the image,
// the git shadows in tmp and, with o.Proxy, the proxy's channel. The
// session's container itself starts with the first command (Runner.Run).
// The orchestration runs every command through the Runner; gs is the
// session's git shadows (nil without any), which it checks around each.
func Open(ctx context.Context, name string, live walls.Source, tmp string, o backend.Options) (r *Runner, gs *gitshadow.Session, err error) {
	p := live.Policy() // for what never changes in a session: roots, bounds, environment
	cli, err := containerClient(name, o.Env)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, nil, fmt.Errorf("%w: the %s engine does not answer (is the daemon running? DOCKER_HOST?): %v", backend.ErrUnavailable, name, err)
	}
	exe, _, err := backend.HelperExe(p.CommandsCanWrite)
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	img, err := containerImage(ctx, cli, p, o.Env(ImageEnv))
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	gs, err = gitshadow.Open(p, tmp)
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	cfg := inner.HelperConfig{Write: append(append(p.WriteRoots(), "/tmp"), gs.WritePaths()...), DenySockets: "unix", MaxProcs: p.MaxProcs(), MaxData: p.MaxMemory()}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		cli.Close()
		return nil, nil, err
	}
	user := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	env := walls.SandboxEnv(p, "/tmp", name)
	entry := []string{Helper, inner.ContainerInitArg}
	// The session's engine directory, beside its tmp and never mounted
	// whole: the proxy's socket, podman's seccomp profile.
	dir, err := os.MkdirTemp(filepath.Dir(tmp), filepath.Base(tmp)+"-ctr-")
	if err != nil {
		gs.Close()
		cli.Close()
		return nil, nil, err
	}
	cr := &Runner{backend: name, cli: cli, pol: live, user: user, cfg: string(cfgJSON), dir: dir}
	fail := func(err error) (*Runner, *gitshadow.Session, error) {
		cr.Close()
		gs.Close()
		return nil, nil, err
	}
	cr.podman = isPodman(ctx, cli)
	seccomp, err := seccompOption(cr.podman, dir, o.Proxy != nil)
	if err != nil {
		return fail(err)
	}
	var cn *containerNet
	if o.Proxy != nil {
		if cn, err = listenContainerNet(dir, o.Proxy); err != nil {
			return fail(err)
		}
		cr.net = cn
		env = append(env, netproxy.ProxyEnv(netproxy.ProxyPort)...)
		entry = append(entry, strconv.Itoa(netproxy.ProxyPort))
		for _, port := range o.Proxy.LoopbackPorts() {
			entry = append(entry, strconv.Itoa(port))
		}
	}
	res := containerResources(p)
	if cr.podman {
		podmanUlimits(&res)
	}
	cr.spec = func(snap *walls.Policy) (*container.Config, *container.HostConfig) {
		mounts := containerMounts(snap, gs, tmp, exe, img.hostFS)
		if cn != nil {
			mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: cn.sock, Target: inner.ContainerProxySock, ReadOnly: true,
				BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}})
		}
		return &container.Config{
				Image:      img.ref,
				Entrypoint: entry,
				Cmd:        []string{}, // not nil: clears the image's
				User:       user,
				Env:        env,
				WorkingDir: p.Project(),
				Labels:     map[string]string{containerLabel: filepath.Base(tmp)},
			}, &container.HostConfig{
				Mounts:         mounts,
				NetworkMode:    "none",
				CapDrop:        []string{"ALL"},
				SecurityOpt:    []string{"no-new-privileges", seccomp},
				ReadonlyRootfs: true,
				Resources:      res,
			}
	}
	return cr, gs, nil
}

// podmanUlimits: rootful podman asks the runtime to raise the descriptor
// and process limits past the engine's own, which fails (runc: "error
// setting rlimit type 7: operation not permitted"). Ask for harness's
// own descriptor limit, and for processes the container's pids limit,
// which bounds them anyway (the inner stage sets the policy's, lower,
// for commands).
func podmanUlimits(res *container.Resources) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err == nil {
		res.Ulimits = append(res.Ulimits, &container.Ulimit{Name: "nofile", Soft: int64(l.Cur), Hard: int64(l.Max)})
	}
	res.Ulimits = append(res.Ulimits, &container.Ulimit{Name: "nproc", Soft: *res.PidsLimit, Hard: *res.PidsLimit})
}

// containerClient reaches the engine from the environment (DOCKER_HOST
// and friends, which engine.New reads); podman without DOCKER_HOST in
// getenv is looked for at its usual sockets.
func containerClient(name string, getenv func(string) string) (*client.Client, error) {
	host := ""
	if name == backend.Podman && getenv(client.EnvOverrideHost) == "" {
		for _, s := range []string{filepath.Join(getenv("XDG_RUNTIME_DIR"), "podman", "podman.sock"), "/run/podman/podman.sock"} {
			if st, err := os.Stat(s); err == nil && st.Mode()&os.ModeSocket != 0 {
				host = "unix://" + s
				break
			}
		}
	}
	cli, err := engine.New(host)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", backend.ErrUnavailable, name, err)
	}
	return cli, nil
}

// containerMounts is the Policy as mounts, in an order the engine keeps
// (it sorts by destination depth; a parent is mounted before what lies
// beneath it).
func containerMounts(p *walls.Policy, gs *gitshadow.Session, tmp, exe string, hostFS bool) []mount.Mount {
	var ms []mount.Mount
	seen := map[string]int{}
	add := func(m mount.Mount) {
		if i, ok := seen[m.Target]; ok {
			ms[i] = m // the later, narrower rule wins (a carve-out over a root)
			return
		}
		seen[m.Target] = len(ms)
		ms = append(ms, m)
	}
	bind := func(src, dst string, ro bool) {
		add(mount.Mount{Type: mount.TypeBind, Source: src, Target: dst, ReadOnly: ro,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}})
	}
	if hostFS {
		for _, m := range hostFSMounts() {
			bind(m, m, true)
		}
	}
	bind(exe, Helper, true)
	bind(tmp, "/tmp", false)
	if p.HostModCache() != "" && backend.Exists(p.HostModCache()) {
		bind(p.HostModCache(), p.HostModCache(), true)
	}
	roots := p.WriteRoots()
	for _, w := range roots {
		bind(w, w, false)
	}
	ro := p.RoBinds()
	for _, r := range ro {
		bind(r, r, true)
	}
	for _, m := range gs.Mounts() {
		bind(m.Shadow, m.Dir, false)
		for _, d := range m.RW {
			bind(filepath.Join(m.Dir, d), filepath.Join(m.Dir, d), false)
		}
		for _, r := range m.RO {
			bind(filepath.Join(m.Dir, r), filepath.Join(m.Dir, r), true)
		}
		if m.Objects {
			src, dst := m.BaseObjects()
			bind(src, dst, true)
		}
	}
	// Hidden paths: only those inside something mounted need a mask.
	visible := append(append([]string(nil), roots...), ro...) // not /tmp: the container's is the session's
	if hostFS {
		visible = append(visible, hostFSMounts()...)
	}
	keep := p.KeepReadable()
	masks := inner.MaskTargets(append(p.MaskPaths(), hostFSSecrets(hostFS)...))
	for _, m := range masks {
		if !underAny(m.Path, visible) {
			continue
		}
		if m.Dir {
			add(mount.Mount{Type: mount.TypeTmpfs, Target: m.Path, ReadOnly: true,
				TmpfsOptions: &mount.TmpfsOptions{SizeBytes: 4096, Mode: 0o111}})
		} else {
			bind(os.DevNull, m.Path, true)
		}
	}
	// This session's spill directory lies under a hidden one; the model
	// reads its spilled results there.
	for _, k := range keep {
		if backend.Exists(k) {
			bind(k, k, true)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return depth(ms[i].Target) < depth(ms[j].Target) })
	return ms
}

// podmanMountable refuses mounts podman's Docker-compatible API would
// misread: it turns each into a --mount option string and parses that as
// CSV (podman 4.3), so a comma in a path splits it into options (a
// directory named "a,ro=false") and a double quote fails the parse. Fail
// closed rather than mount something else.
func podmanMountable(ms []mount.Mount) error {
	for _, m := range ms {
		for _, p := range []string{m.Source, m.Target} {
			if strings.ContainsAny(p, ",\"\n\r") {
				return fmt.Errorf("%w: podman cannot mount %q: its Docker-compatible API reads mounts as comma-separated options, so a path with a comma, a double quote or a newline would be misread (use --sandbox docker or bwrap, or rename it)", backend.ErrUnavailable, p)
			}
		}
	}
	return nil
}

func depth(p string) int {
	n := 0
	for _, c := range filepath.Clean(p) {
		if c == '/' {
			n++
		}
	}
	return n
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if walls.Within(p, r) {
			return true
		}
	}
	return false
}

// Runner runs a session's commands as execs in its container (a
// backend.Runner).
type Runner struct {
	backend string
	cli     *client.Client
	pol     walls.Source // each new container mounts its current snapshot
	user    string
	cfg     string // the inner stage's helperConfig, JSON
	spec    func(snap *walls.Policy) (*container.Config, *container.HostConfig)
	note    string        // said once, with the first command's output
	net     *containerNet // the proxy's channel, when offered
	dir     string        // the session's engine directory, removed at close
	podman  bool          // the engine is podman's (isPodman)

	mu       sync.Mutex
	cur      *containerProc
	closed   bool
	restarts int
}

type containerProc struct {
	id       string
	gen      int
	inflight int
	retired  bool
}

// containerStopGrace bounds the wait for a command's supervisor to kill
// its tree and exit after its stdin closed.
const containerStopGrace = 10 * time.Second

func (c *Runner) get(ctx context.Context) (*containerProc, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, "", errors.New("the sandbox is closed")
	}
	note := c.note
	c.note = ""
	snap := c.pol.Policy() // one snapshot: the generation is that of the mounts
	if c.cur != nil && c.cur.gen != snap.Generation() {
		// New carve-outs need new mounts: a new container (the private
		// /tmp is a host directory, so its files carry over).
		c.retire(c.cur)
		c.cur = nil
	}
	if c.cur != nil {
		c.cur.inflight++
		return c.cur, note, nil
	}
	gen := snap.Generation()
	cfg, hc := c.spec(snap)
	if c.podman {
		if err := podmanMountable(hc.Mounts); err != nil {
			return nil, "", err
		}
	}
	res, err := c.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc})
	if err != nil {
		return nil, "", fmt.Errorf("%s: creating the session's container: %w", c.backend, err)
	}
	id := res.ID
	c.net.armed()
	if _, err := c.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		c.remove(id)
		return nil, "", fmt.Errorf("%s: starting the session's container: %w", c.backend, err)
	}
	if err := c.net.waitReady(ctx, c.cli, id); err != nil {
		c.remove(id)
		return nil, "", fmt.Errorf("%s: %w", c.backend, err)
	}
	c.cur = &containerProc{id: id, gen: gen, inflight: 1}
	return c.cur, note, nil
}

// retire removes cp once no command runs in it. Called with c.mu held.
func (c *Runner) retire(cp *containerProc) {
	cp.retired = true
	if cp.inflight == 0 {
		go c.remove(cp.id)
	}
}

// stopped reports whether cp no longer runs, and retires it then.
func (c *Runner) stopped(ctx context.Context, cp *containerProc) bool {
	in, err := c.cli.ContainerInspect(ctx, cp.id, client.ContainerInspectOptions{})
	if err == nil && in.Container.State != nil && in.Container.State.Running {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == cp {
		c.cur = nil
		c.restarts++
	}
	cp.retired = true
	return true
}

func (c *Runner) release(cp *containerProc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp.inflight--
	if cp.retired && cp.inflight == 0 {
		go c.remove(cp.id)
	}
}

func (c *Runner) remove(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = c.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
}

// Run implements backend.Runner.
func (c *Runner) Run(ctx context.Context, script, dir string, stdout, stderr io.Writer) (int, string, error) {
	bg := context.WithoutCancel(ctx)
	cp, note, err := c.get(bg)
	if err != nil {
		return 0, note, err
	}
	opts := client.ExecCreateOptions{
		Cmd: []string{Helper, inner.ContainerExecArg, c.cfg, script}, WorkingDir: dir, User: c.user,
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
	}
	ex, err := c.cli.ExecCreate(bg, cp.id, opts)
	if err != nil && c.stopped(bg, cp) {
		// The container is gone (killed from outside, the engine
		// restarted): the next one mounts the same walls.
		c.release(cp)
		if cp, _, err = c.get(bg); err != nil {
			return 0, note, err
		}
		note += fmt.Sprintf("[harness: the session's %s container had stopped; started a new one]\n", c.backend)
		ex, err = c.cli.ExecCreate(bg, cp.id, opts)
	}
	defer c.release(cp)
	if err != nil {
		return 0, note, fmt.Errorf("%s exec: %w", c.backend, err)
	}
	code, forced, err := engine.Run(ctx, c.cli, ex.ID, stdout, stderr, engine.Stop{
		// The supervisor's stdin ends: it kills the command's tree and
		// exits, which ends the stream.
		Soft:  func(_ string, att *client.HijackedResponse) { _ = att.CloseWrite() },
		Hard:  func(_ string, att *client.HijackedResponse) { att.Close() },
		Grace: containerStopGrace,
	})
	if forced {
		note += fmt.Sprintf("[harness: the command's supervisor did not stop within %s of the kill]\n", containerStopGrace)
	}
	if err != nil {
		return 0, note, fmt.Errorf("%s %w", c.backend, err)
	}
	return code, note, nil
}

// Close implements backend.Runner: it removes the session's container.
func (c *Runner) Close() {
	c.mu.Lock()
	c.closed = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		c.remove(cur.id)
	}
	c.net.close()
	os.RemoveAll(c.dir)
	c.cli.Close()
}

// Limits says what the container backend name does not hold or does
// differently.
func Limits(name string) []string {
	l := []string{
		"the image must run the harness binary (it is the container's init and each command's supervisor): a glibc image no older than the host's; the default image uses the host's own /usr and /etc",
		"only what the policy names is in the container: the project, its carve-outs, the private /tmp (and, with the default image, the host's /usr and /etc); the rest of the host, $HOME included, is not there to read",
	}
	if name == backend.Podman {
		l = append(l, "podman: a path with a comma, a double quote or a newline cannot be mounted (its Docker-compatible API reads mounts as comma-separated options): such a project is refused")
	}
	if inner.LandlockABI() < 6 {
		l = append(l, "Landlock below ABI 6: a command can kill its own supervisor (its tree is then killed by the container's init; a denial of service only)")
	}
	return l
}

// Bounds are the pids and memory limits of the session's container under
// p, which the engine's cgroup holds for the whole session.
func Bounds(p *walls.Policy) (pids, memory int64) {
	r := containerResources(p)
	return *r.PidsLimit, r.Memory
}
