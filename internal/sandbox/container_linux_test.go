package sandbox

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/testenv"
)

// openSession opens backend's sandbox on project, closed when t ends.
func openSession(t *testing.T, backend, project string, opts ...Option) (Sandbox, *Policy) {
	t.Helper()
	p, err := NewPolicy(PolicyOptions{Project: project, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(context.Background(), p, backend, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, p
}

// requireDocker skips (or fails, when CI requires docker) unless an engine
// answers and HARNESS_TEST_IMAGE is there. The tests give the backend that
// image as HARNESS_IMAGE through WithEnv(testEnv).
func requireDocker(t testing.TB) {
	t.Helper()
	img := os.Getenv("HARNESS_TEST_IMAGE")
	if img == "" {
		testenv.Missing(t, testenv.Docker, "HARNESS_TEST_IMAGE is not set (see .ci/run)")
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		testenv.Missing(t, testenv.Docker, err.Error())
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		testenv.Missing(t, testenv.Docker, "the engine does not answer: "+err.Error())
	}
	if _, err := cli.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, testenv.Docker, "image "+img+": "+err.Error())
	}
}

// TestContainerBattery runs the escape battery through the docker
// backend, against the real engine, every probe checked on the host.
func TestContainerBattery(t *testing.T) {
	requireDocker(t)
	t.Parallel()
	var out bytes.Buffer
	n, err := Battery(context.Background(), BackendDocker, &out, WithEnv(testEnv))
	t.Logf("uid %d:\n%s", os.Getuid(), out.String())
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d probes escaped the docker sandbox", n)
	}
	if c := strings.Count(out.String(), "\nheld "); c < 20 {
		t.Errorf("only %d probes held; the battery did not run in full", c)
	}
	if !strings.Contains(out.String(), "backend docker") {
		t.Errorf("the battery did not run through the docker backend")
	}
}

// BenchmarkContainerOverhead measures one session's per-command cost, in
// one interleaved loop: `true` without walls (none), through the bwrap
// backend's launcher, as an exec in the docker backend's session
// container, and, for scale, in a fresh container of the same image
// (create, start, wait, remove) as a backend without a session
// container would pay.
//
//	HARNESS_TEST_IMAGE=harness-test-base:bookworm go test -run '^$' -bench ContainerOverhead -benchtime 20x ./internal/sandbox/
func BenchmarkContainerOverhead(b *testing.B) {
	requireDocker(b)
	none := openBench(b, BackendNone)
	bw := openBench(b, BackendBwrap, WithLauncher(true))
	dk := openBench(b, BackendDocker, WithEnv(testEnv))
	cli, err := client.New(client.FromEnv)
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	fresh := func() {
		cfg, hc := dk.(*instance).launch.(*containerRunner).spec()
		cfg.Entrypoint = []string{"/bin/true"}
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc})
		if err != nil {
			b.Fatal(err)
		}
		defer cli.ContainerRemove(ctx, res.ID, client.ContainerRemoveOptions{Force: true})
		if _, err := cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
			b.Fatal(err)
		}
		w := cli.ContainerWait(ctx, res.ID, client.ContainerWaitOptions{})
		select {
		case <-w.Result:
		case err := <-w.Error:
			b.Fatal(err)
		}
	}
	var plain, viaBwrap, viaExec, viaFresh time.Duration
	timed := func(total *time.Duration, f func()) {
		start := time.Now()
		f()
		*total += time.Since(start)
	}
	run := func(sb Sandbox) func() {
		return func() {
			if r, err := sb.Run(ctx, Cmd{Script: "true"}); err != nil || r.ExitCode != 0 {
				b.Fatalf("%v %+v", err, r)
			}
		}
	}
	for b.Loop() {
		timed(&plain, run(none))
		timed(&viaBwrap, run(bw))
		timed(&viaExec, run(dk))
		timed(&viaFresh, fresh)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(plain), "ms-none")
	b.ReportMetric(ms(viaBwrap), "ms-bwrap")
	b.ReportMetric(ms(viaExec), "ms-docker-exec")
	b.ReportMetric(ms(viaFresh), "ms-fresh-container")
	b.ReportMetric(float64(viaExec)/float64(viaBwrap), "x-exec-over-bwrap")
}

func TestContainerSeccompCoversInnerStage(t *testing.T) {
	for _, proxy := range []bool{false, true} {
		t.Run(fmt.Sprint("proxy=", proxy), func(t *testing.T) { checkContainerSeccomp(t, proxy) })
	}
}

func checkContainerSeccomp(t *testing.T, proxy bool) {
	prof := containerSeccompProfile(proxy)
	named := map[string]bool{}
	for _, r := range prof.Syscalls {
		if len(r.Args) == 0 && r.Action == "SCMP_ACT_ERRNO" && *r.ErrnoRet == uint(unix.EPERM) {
			for _, n := range r.Names {
				named[n] = true
			}
		}
	}
	for _, nr := range deniedSyscalls {
		name, ok := syscallNames[nr]
		if !ok {
			t.Fatalf("system call %d is denied by the inner stage but has no name for the container profile", nr)
		}
		if !named[name] {
			t.Errorf("%s is denied by the inner stage, not by the container profile", name)
		}
	}
	var cloneFlags uint64
	var sockets, ioctls []uint64
	for _, r := range prof.Syscalls {
		switch r.Names[0] {
		case "clone":
			cloneFlags |= r.Args[0].Value
		case "socket":
			// The family is compared in its low word: the kernel ignores
			// the high one.
			if r.Args[0].Op != "SCMP_CMP_MASKED_EQ" || r.Args[0].Value != 0xffffffff {
				t.Errorf("socket rule %+v compares the family's 64 bits", r.Args[0])
			}
			sockets = append(sockets, r.Args[0].ValueTwo)
			want := 1
			if proxy && r.Args[0].ValueTwo == unix.AF_UNIX {
				// Only the init's proxy channel: one exact type.
				want = 2
				if a := r.Args[1]; a.Index != 1 || a.Op != "SCMP_CMP_NE" || a.Value != unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC {
					t.Errorf("the unix socket let through with the proxy: %+v", a)
				}
			}
			if len(r.Args) != want {
				t.Errorf("socket rule %+v: want %d conditions", r.Args, want)
			}
		case "ioctl":
			ioctls = append(ioctls, r.Args[0].ValueTwo)
		case "clone3":
			if *r.ErrnoRet != uint(unix.ENOSYS) {
				t.Errorf("clone3 gets errno %d, want ENOSYS so libc falls back to clone", *r.ErrnoRet)
			}
		}
	}
	if cloneFlags != cloneNamespaces {
		t.Errorf("clone rules cover flags %#x, want every namespace flag %#x", cloneFlags, uint64(cloneNamespaces))
	}
	if fmt.Sprint(sockets) != fmt.Sprint([]uint64{unix.AF_UNIX, unix.AF_VSOCK}) {
		t.Errorf("socket rules deny families %v, want AF_UNIX and AF_VSOCK", sockets)
	}
	if fmt.Sprint(ioctls) != fmt.Sprint([]uint64{unix.TIOCSTI, unix.TIOCLINUX}) {
		t.Errorf("ioctl rules deny %v, want TIOCSTI and TIOCLINUX", ioctls)
	}
	if prof.DefaultAction != "SCMP_ACT_ALLOW" || len(prof.Architectures) == 0 {
		t.Errorf("profile %+v", prof)
	}
}

// TestContainerMounts: the policy, as mounts. The project read-write,
// .git and .agents read-only on top, the home directory and the rest of
// the host absent.
func TestContainerMounts(t *testing.T) {
	base := t.TempDir()
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(proj, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(proj, ".git", "config"), []byte(configText), 0o644)
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	p, err := NewPolicy(PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	// With the default image: the host's /usr and /etc, read-only, its
	// password hashes behind /dev/null.
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o700)
	gs, err := openGitShadows(p, tmp)
	if err != nil || gs == nil {
		t.Fatalf("git shadows: %v", err)
	}
	defer gs.close()
	ms := containerMounts(p, gs, tmp, "/bin/true", true)
	got := map[string]string{}
	for _, m := range ms {
		kind := string(m.Type)
		if m.ReadOnly {
			kind += ",ro"
		}
		if m.Type == "bind" && m.Source != m.Target {
			kind += " from " + m.Source
		}
		got[m.Target] = kind
	}
	want := map[string]string{
		p.Project:                                  "bind",
		filepath.Join(p.Project, ".agents"):        "bind,ro",
		filepath.Join(p.Project, ".git"):           "bind from " + gs.shadows[0].shadow,
		filepath.Join(p.Project, ".git", "config"): "bind,ro",
		filepath.Join(p.Project, ".git", "hooks"):  "bind,ro",
		// The real objects, read-only: the shadow's own objects
		// directory takes new ones (append-only history).
		filepath.Join(p.Project, ".git", "objects", gitObjectsBase): "bind,ro from " + filepath.Join(p.Project, ".git", "objects"),
		"/etc":          "bind,ro",
		"/usr":          "bind,ro",
		"/etc/shadow":   "bind,ro from /dev/null",
		"/tmp":          "bind from " + tmp,
		containerHelper: "bind,ro from /bin/true",
	}
	for target, kind := range want {
		if got[target] != kind {
			t.Errorf("%s: mounted %q, want %q", target, got[target], kind)
		}
	}
	for target := range got {
		if within(target, home) || target == "/" || within(target, "/root") || within(target, "/var") || within(target, "/run") {
			t.Errorf("%s is mounted: only what the policy names may be", target)
		}
	}
	for i := 1; i < len(ms); i++ {
		if depth(ms[i].Target) < depth(ms[i-1].Target) {
			t.Errorf("%s is mounted after %s, beneath which it lies", ms[i].Target, ms[i-1].Target)
		}
	}
}

// TestContainerEngineConfig asks the engine, from the host, what the
// session's container really runs with.
func TestContainerEngineConfig(t *testing.T) {
	requireDocker(t)
	t.Parallel()
	sb, p := openSession(t, BackendDocker, t.TempDir(), WithEnv(testEnv))
	cr := sb.(*instance).launch.(*containerRunner)
	cli := cr.cli
	in, err := cli.ContainerInspect(context.Background(), cr.cur.id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := in.Container.HostConfig
	if string(hc.NetworkMode) != "none" || !hc.ReadonlyRootfs || fmt.Sprint(hc.CapDrop) != "[ALL]" || len(hc.CapAdd) != 0 || hc.Privileged {
		t.Errorf("network %q, read-only root %v, cap drop %v, cap add %v, privileged %v", hc.NetworkMode, hc.ReadonlyRootfs, hc.CapDrop, hc.CapAdd, hc.Privileged)
	}
	want := containerResources(p)
	if hc.Memory != want.Memory || hc.PidsLimit == nil || *hc.PidsLimit != *want.PidsLimit || *want.PidsLimit != int64(p.MaxProcs)+pidsHeadroom {
		t.Errorf("memory %d, pids %v; want %d, %d", hc.Memory, hc.PidsLimit, want.Memory, *want.PidsLimit)
	}
	var nnp, seccomp bool
	for _, o := range hc.SecurityOpt {
		nnp = nnp || o == "no-new-privileges"
		seccomp = seccomp || strings.HasPrefix(o, "seccomp=") && strings.Contains(o, "io_uring_setup")
	}
	if !nnp || !seccomp {
		t.Errorf("security options %.200q: want no-new-privileges and the harness seccomp profile", hc.SecurityOpt)
	}
	// And from inside: the engine's own view of the walls.
	r, err := sb.Run(context.Background(), Cmd{Script: "grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/self/status; cat /sys/fs/cgroup/pids.max 2>/dev/null; env"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	for _, want := range []string{"CapBnd:\t0000000000000000", "Seccomp:\t2", "NoNewPrivs:\t1", "HARNESS_SANDBOX=docker"} {
		if !strings.Contains(out, want) {
			t.Errorf("inside, want %q in:\n%s", want, out)
		}
	}
}

// TestContainerNewRepositoryProtected: a repository created mid-session is
// carved out from the next command on, although the container's mounts
// were fixed at its start: the container is replaced, and the private
// /tmp carries over.
func TestContainerNewRepositoryProtected(t *testing.T) {
	requireDocker(t)
	t.Parallel()
	sb, p := openSession(t, BackendDocker, t.TempDir(), WithEnv(testEnv))
	ctx := context.Background()
	r, err := sb.Run(ctx, Cmd{Script: "mkdir -p sub/.git/hooks && echo orig > sub/.git/config && echo kept > /tmp/k"})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%v %+v %s", err, r, r.Output)
	}
	if len(r.Found) == 0 {
		t.Fatalf("the new repository was not found: %+v", r)
	}
	r, err = sb.Run(ctx, Cmd{Script: "echo evil > sub/.git/config; echo evil > sub/.git/hooks/pre-commit; cat /tmp/k"})
	if err != nil {
		t.Fatal(err)
	}
	if c := content(filepath.Join(p.Project, "sub", ".git", "config")); c != "orig\n" {
		t.Errorf("sub/.git/config now holds %q: the carve-out did not reach the container", c)
	}
	if exists(filepath.Join(p.Project, "sub", ".git", "hooks", "pre-commit")) {
		t.Errorf("a hook was planted in the new repository")
	}
	if !strings.Contains(string(r.Output), "kept") {
		t.Errorf("/tmp did not carry over to the new container: %s", r.Output)
	}
}

// TestContainerProxy: with the proxy offered, a command in the session's
// container (--network none) reaches a TLS origin and a plain HTTP origin
// on the host's loopback through an allow rule, an unlisted host is
// refused, and nothing else gets out: no interface but loopback, no direct
// connection to any of the host's addresses, the proxy channel's socket
// unusable by a command, and the engine's own profile (checked with an
// exec that is not behind the inner stage) letting through no unix
// socket but the channel's one kind. The default image, for the host's
// curl and python3.
func TestContainerProxy(t *testing.T) {
	requireDocker(t)
	// No WithEnv(testEnv): the default image, with the host's curl and python3.
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "origin says hi to %s", r.Host)
	}))
	defer origin.Close()
	port := origin.Listener.Addr().(*net.TCPAddr).Port
	// A plain HTTP server on every host address, for direct attempts.
	wide, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain origin, %s", r.Host)
	})}
	go plain.Serve(wide)
	defer plain.Close()
	widePort := wide.Addr().(*net.TCPAddr).Port
	rec := &records{}
	loop := netip.MustParseAddr("127.0.0.1")
	px := &Proxy{
		Decide: func(_ context.Context, host string, _ int) ConnVerdict {
			if host == "www.example.com" || host == "plain.example.com" {
				return ConnVerdict{Allowed: true, Rule: "allow net *.example.com"}
			}
			return ConnVerdict{Reason: "no rule allows " + host + ": re-run with --allow-net " + host}
		},
		Record:    rec.add,
		LookupIP:  func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{loop}, nil },
		Reachable: func(a netip.Addr) bool { return a == loop },
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o644)
	sb, _ := openSession(t, BackendDocker, proj, WithProxy(px))
	if !OffersProxy(sb) {
		t.Fatal("the docker backend does not offer the proxy")
	}
	run := func(script string) string {
		t.Helper()
		r, err := sb.Run(context.Background(), Cmd{Script: script, Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\n-> exit %d\n%s", script, r.ExitCode, r.Output)
		return fmt.Sprintf("exit %d\n%s", r.ExitCode, r.Output)
	}

	out := run(fmt.Sprintf("curl -sS --max-time 20 --cacert ca.pem https://www.example.com:%d/x", port))
	if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, fmt.Sprintf("origin says hi to www.example.com:%d", port)) {
		t.Fatalf("TLS through the proxy:\n%s", out)
	}
	if got := rec.await(t, 0, nil); got.Verdict != "allowed" || got.Host != "www.example.com" || got.Up == 0 || got.Down == 0 {
		t.Errorf("record %+v", got)
	}
	// A repository made mid-session replaces the container (new
	// carve-outs); the new one's init connects the proxy anew.
	cr := sb.(*instance).launch.(*containerRunner)
	first := cr.cur.id
	run("mkdir -p sub/.git/hooks && echo x > sub/.git/config")
	out = run(fmt.Sprintf("curl -sS --max-time 20 http://plain.example.com:%d/y", widePort))
	if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, fmt.Sprintf("plain origin, plain.example.com:%d", widePort)) {
		t.Errorf("plain HTTP through the proxy, in the replaced container:\n%s", out)
	}
	cr.mu.Lock()
	if cr.cur == nil || cr.cur.id == first {
		t.Errorf("the container was not replaced for the new repository")
	}
	cr.mu.Unlock()
	out = run("curl -sS --max-time 20 https://unlisted.test/")
	if strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, "[harness: network: refused CONNECT unlisted.test:443") || !strings.Contains(out, "--allow-net unlisted.test") {
		t.Errorf("unlisted:\n%s", out)
	}

	// Nothing else: only loopback, and no direct connection to any of
	// the host's addresses (the plain server listens on all of them).
	out = run("ls /sys/class/net")
	if strings.TrimSpace(strings.TrimPrefix(out, "exit 0\n")) != "lo" {
		t.Errorf("interfaces in the container:\n%s", out)
	}
	addrs, _ := net.InterfaceAddrs()
	var targets []string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLinkLocalUnicast() {
			targets = append(targets, fmt.Sprintf("(%q, %d)", ipn.IP.String(), widePort))
		}
	}
	targets = append(targets, fmt.Sprintf("(%q, %d)", "127.0.0.1", port), `("1.1.1.1", 443)`)
	out = run(`/usr/bin/python3 -c '
import socket
for host, port in (` + strings.Join(targets, ", ") + `,):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5); s.connect((host, port)); print("CONNECTED", host, port)
    except OSError as e:
        print("no way", host, port, e.strerror)
'`)
	if strings.Contains(out, "CONNECTED") || strings.Count(out, "no way") != len(targets) {
		t.Errorf("a direct connection from the container:\n%s", out)
	}
	// The channel's socket is the init's: a command gets no unix socket,
	// not even of the kind the engine's profile lets through, nor with
	// the family's high word set.
	out = run(`/usr/bin/python3 -c '
import ctypes, socket
for typ in (socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC, socket.SOCK_STREAM):
    try:
        s = socket.socket(socket.AF_UNIX, typ); s.connect("` + containerProxySock + `"); print("CHANNEL", typ)
    except OSError as e:
        print("no channel", e.strerror)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.argtypes = [ctypes.c_long] * 4
print("high word", libc.syscall(41, (1 << 32) | 1, 5 | 0o2000000, 0), ctypes.get_errno())
'`)
	if strings.Contains(out, "CHANNEL") || strings.Count(out, "no channel Operation not permitted") != 2 || !strings.Contains(out, "high word -1 1") {
		t.Errorf("a command reached for the proxy channel:\n%s", out)
	}

	// The engine's profile itself, below the inner stage: an exec of the
	// host's python3 straight in the container.
	cr.mu.Lock()
	id := cr.cur.id
	cr.mu.Unlock()
	raw := execRaw(t, cr.cli, id, cr.user, `import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.argtypes = [ctypes.c_long] * 4
for name, fam, typ in (("stream", 1, 1), ("high-word stream", (1 << 32) | 1, 1), ("vsock", 40, 1), ("channel", 1, 5 | 0o2000000)):
    fd = libc.syscall(41, fam, typ, 0)
    print(name, "ok" if fd >= 0 else "errno %d" % ctypes.get_errno())
`)
	t.Log(raw)
	for _, want := range []string{"stream errno 1", "high-word stream errno 1", "vsock errno 1", "channel ok"} {
		if !strings.Contains(raw, want+"\n") {
			t.Errorf("the engine's profile: want %q in:\n%s", want, raw)
		}
	}
}

// execRaw runs python3 code in container id as an exec of its own, not
// behind harness's supervisor and inner stage, and returns its output.
func execRaw(t *testing.T, cli *client.Client, id, user, code string) string {
	t.Helper()
	ctx := context.Background()
	ex, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: []string{"/usr/bin/python3", "-c", code}, User: user, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	var b bytes.Buffer
	stdcopy.StdCopy(&b, &b, att.Reader)
	return b.String()
}

func TestPodmanMountable(t *testing.T) {
	for _, tc := range []struct {
		src, dst string
		ok       bool
	}{
		{"/p/my 'proj' it's here", "/p/my 'proj' it's here", true},
		{"/p/a,ro=false/.git", "/p/a,ro=false/.git", false}, // would split into options
		{"/dev/null", `/p/my "proj"/.env`, false},           // fails podman's CSV parse
		{"/p/x\ny", "/p/x\ny", false},
	} {
		err := podmanMountable([]mount.Mount{{Type: mount.TypeBind, Source: "/usr", Target: "/usr"}, {Type: mount.TypeBind, Source: tc.src, Target: tc.dst}})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrUnavailable)) {
			t.Errorf("%q -> %q: %v", tc.src, tc.dst, err)
		}
	}
}

// TestPodmanSession runs a session through rootful podman's
// Docker-compatible socket where one answers (CI installs no podman: it
// skips there): the engine's walls from inside, the proxy, and a project
// podman would misread refused.
func TestPodmanSession(t *testing.T) {
	const sock = "/run/podman/podman.sock"
	if _, err := os.Stat(sock); err != nil || os.Getenv("DOCKER_HOST") != "" || os.Getenv("HARNESS_TEST_IMAGE") == "" {
		t.Skip("no rootful podman socket at " + sock + " (and HARNESS_TEST_IMAGE loaded into podman)")
	}
	px := &Proxy{Decide: func(context.Context, string, int) ConnVerdict { return ConnVerdict{Reason: "no rule allows it"} }}
	sb, _ := openSession(t, BackendPodman, t.TempDir(), WithEnv(testEnv), WithProxy(px))
	r, err := sb.Run(context.Background(), Cmd{Script: `grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/self/status; ls /sys/class/net
bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128 && printf "CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n" >&3 && head -c 12 <&3'`})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	for _, want := range []string{"CapBnd:\t0000000000000000", "Seccomp:\t2", "NoNewPrivs:\t1", "\nlo\n", "HTTP/1.1 403", "refused CONNECT unlisted.test:443"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	comma := filepath.Join(t.TempDir(), "a,ro=false")
	os.Mkdir(comma, 0o755)
	p2, err := NewPolicy(PolicyOptions{Project: comma})
	if err != nil {
		t.Fatal(err)
	}
	if sb2, err := Open(context.Background(), p2, BackendPodman); err == nil {
		sb2.Close()
		t.Error("podman mounted a project whose path it reads as options")
	} else if !strings.Contains(err.Error(), "podman cannot mount") {
		t.Errorf("the comma project: %v", err)
	}
}

// TestProjectImageBuildsWithoutNetwork: harness.Dockerfile is the
// project's, which the agent can write, so its RUN steps get no network:
// a build that sees an interface besides loopback fails, and one that
// needs none builds.
func TestProjectImageBuildsWithoutNetwork(t *testing.T) {
	requireDocker(t)
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	img := os.Getenv("HARNESS_TEST_IMAGE")
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	df := "FROM " + img + "\nRUN test \"$(ls /sys/class/net)\" = lo && echo " + tag + " > /built\n"
	got, err := projectImage(context.Background(), cli, []byte(df))
	if err != nil {
		t.Fatalf("a build that needs no network: %v", err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), got.ref, client.ImageRemoveOptions{Force: true}) })
	_, err = projectImage(context.Background(), cli, []byte("FROM "+img+"\nRUN echo "+tag+" && getent hosts example.com || ls /sys/class/net | grep -vx lo\n"))
	if err == nil || !strings.Contains(err.Error(), "without network") {
		t.Errorf("a build that looks for a network: %v, want it to fail, saying the build has no network", err)
	}
}
