package container_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/battery"
	"github.com/harness-dev/harness/internal/sandbox/container"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/netproxy"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/engine"
)

// openSession opens backend's sandbox on project, closed when t ends.
func openSession(t *testing.T, backend, project string, opts ...sandbox.Option) (sandbox.Sandbox, *walls.Policy) {
	t.Helper()
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: project, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(p), backend, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, p
}

// TestContainerBattery runs the escape battery through the docker
// backend, against the real engine, every probe checked on the host.
func TestContainerBattery(t *testing.T) {
	container.RequireDocker(t)
	t.Parallel()
	var out bytes.Buffer
	n, err := battery.Run(context.Background(), sandbox.BackendDocker, &out, sandbox.WithEnv(testEnv))
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
	container.RequireDocker(b)
	none := openBench(b, sandbox.BackendNone)
	bw := openBench(b, sandbox.BackendBwrap, sandbox.WithLauncher(true))
	dk := openBench(b, sandbox.BackendDocker, sandbox.WithEnv(testEnv))
	cli, err := engine.New("")
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	fresh := func() {
		cfg, hc := RunnerOf(dk).Spec()
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
	run := func(sb sandbox.Sandbox) func() {
		return func() {
			if r, err := sb.Run(ctx, sandbox.Cmd{Script: "true"}); err != nil || r.ExitCode != 0 {
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

// TestContainerEngineConfig asks the engine, from the host, what the
// session's container really runs with.
func TestContainerEngineConfig(t *testing.T) {
	container.RequireDocker(t)
	t.Parallel()
	sb, p := openSession(t, sandbox.BackendDocker, t.TempDir(), sandbox.WithEnv(testEnv))
	cr := RunnerOf(sb)
	cli := cr.Client()
	in, err := cli.ContainerInspect(context.Background(), cr.CurrentID(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := in.Container.HostConfig
	if hc.NetworkMode != "none" || !hc.ReadonlyRootfs || fmt.Sprint(hc.CapDrop) != "[ALL]" || len(hc.CapAdd) != 0 || hc.Privileged {
		t.Errorf("network %q, read-only root %v, cap drop %v, cap add %v, privileged %v", hc.NetworkMode, hc.ReadonlyRootfs, hc.CapDrop, hc.CapAdd, hc.Privileged)
	}
	want := container.ContainerResources(p)
	if hc.Memory != want.Memory || hc.PidsLimit == nil || *hc.PidsLimit != *want.PidsLimit || *want.PidsLimit != int64(p.MaxProcs())+container.PidsHeadroom {
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
	r, err := sb.Run(context.Background(), sandbox.Cmd{Script: "grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/self/status; cat /sys/fs/cgroup/pids.max 2>/dev/null; env"})
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
	container.RequireDocker(t)
	t.Parallel()
	sb, p := openSession(t, sandbox.BackendDocker, t.TempDir(), sandbox.WithEnv(testEnv))
	ctx := context.Background()
	r, err := sb.Run(ctx, sandbox.Cmd{Script: "mkdir -p sub/.git/hooks && echo orig > sub/.git/config && echo kept > /tmp/k"})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%v %+v %s", err, r, r.Output)
	}
	if len(r.Found) == 0 {
		t.Fatalf("the new repository was not found: %+v", r)
	}
	r, err = sb.Run(ctx, sandbox.Cmd{Script: "echo evil > sub/.git/config; echo evil > sub/.git/hooks/pre-commit; cat /tmp/k"})
	if err != nil {
		t.Fatal(err)
	}
	if c := content(filepath.Join(p.Project(), "sub", ".git", "config")); c != "orig\n" {
		t.Errorf("sub/.git/config now holds %q: the carve-out did not reach the container", c)
	}
	if exists(filepath.Join(p.Project(), "sub", ".git", "hooks", "pre-commit")) {
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
	container.RequireDocker(t)
	// No sandbox.WithEnv(testEnv): the default image, with the host's curl and python3.
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
	px := &netproxy.Proxy{
		Decide: func(_ context.Context, host string, _ int) netproxy.ConnVerdict {
			if host == "www.example.com" || host == "plain.example.com" {
				return netproxy.ConnVerdict{Allowed: true, Rule: "allow net *.example.com"}
			}
			return netproxy.ConnVerdict{Reason: "no rule allows " + host + ": re-run with --allow-net " + host}
		},
		Record:    rec.add,
		LookupIP:  func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{loop}, nil },
		Reachable: func(a netip.Addr) bool { return a == loop },
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o644)
	sb, _ := openSession(t, sandbox.BackendDocker, proj, sandbox.WithProxy(px))
	if !sandbox.OffersProxy(sb) {
		t.Fatal("the docker backend does not offer the proxy")
	}
	run := func(script string) string {
		t.Helper()
		r, err := sb.Run(context.Background(), sandbox.Cmd{Script: script, Timeout: 60 * time.Second})
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
	cr := RunnerOf(sb)
	first := cr.CurrentID()
	run("mkdir -p sub/.git/hooks && echo x > sub/.git/config")
	out = run(fmt.Sprintf("curl -sS --max-time 20 http://plain.example.com:%d/y", widePort))
	if !strings.HasPrefix(out, "exit 0\n") || !strings.Contains(out, fmt.Sprintf("plain origin, plain.example.com:%d", widePort)) {
		t.Errorf("plain HTTP through the proxy, in the replaced container:\n%s", out)
	}
	if id := cr.CurrentID(); id == "" || id == first {
		t.Errorf("the container was not replaced for the new repository")
	}
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
        s = socket.socket(socket.AF_UNIX, typ); s.connect("` + inner.ContainerProxySock + `"); print("CHANNEL", typ)
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
	id := cr.CurrentID()
	raw := execRaw(t, cr.Client(), id, cr.User(), `import ctypes, socket
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
	if _, err := stdcopy.StdCopy(&b, &b, att.Reader); err != nil {
		t.Error(err)
	}
	return b.String()
}

// TestPodmanSession runs a session through rootful podman's
// Docker-compatible socket where one answers (CI installs no podman: it
// skips there): the engine's walls from inside, the proxy, and a project
// podman would misread refused.
// TestContainerLoopbackForward: a rule naming a host loopback port
// exactly (allow net 127.0.0.1:PORT) is reached from the session's
// container as from bwrap's namespace (the init listens on that port and
// hands each connection over the proxy's channel); a host loopback port
// no rule names is not, and the forwarded connection is recorded.
func TestContainerLoopbackForward(t *testing.T) {
	container.RequireDocker(t)
	serve := func(greeting string) int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(greeting))
				c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	port, otherPort := serve("reached-allowed"), serve("reached-other")
	rec := &records{}
	px := &netproxy.Proxy{
		Decide: func(_ context.Context, h string, p int) netproxy.ConnVerdict {
			if h == "127.0.0.1" && p == port {
				return netproxy.ConnVerdict{Allowed: true, Exact: true, Rule: fmt.Sprintf("allow net 127.0.0.1:%d", p)}
			}
			return netproxy.ConnVerdict{Reason: "no rule allows " + h}
		},
		Record:   rec.add,
		Loopback: []netproxy.LoopbackForward{{Host: "127.0.0.1", Port: port}},
	}
	sb, _ := openSession(t, sandbox.BackendDocker, t.TempDir(), sandbox.WithProxy(px), sandbox.WithEnv(testEnv))
	script := fmt.Sprintf(`for p in %d %d; do (exec 3<>/dev/tcp/127.0.0.1/$p && head -c 20 <&3) 2>/dev/null; echo " [$p]"; done`, port, otherPort)
	r, err := sb.Run(context.Background(), sandbox.Cmd{Script: "exec bash -c '" + script + "'", Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	if !strings.Contains(out, "reached-allowed") {
		t.Errorf("the allowed host loopback port was not reached from the container:\n%s", out)
	}
	if strings.Contains(out, "reached-other") {
		t.Errorf("a host loopback port no rule names was reached from the container:\n%s", out)
	}
	rec.await(t, 0, func(c netproxy.ConnRecord) bool {
		return c.Method == "LOOPBACK" && c.Port == port && c.Verdict == "allowed"
	})
}

func TestPodmanSession(t *testing.T) {
	const sock = "/run/podman/podman.sock"
	if _, err := os.Stat(sock); err != nil || os.Getenv("DOCKER_HOST") != "" || os.Getenv("HARNESS_TEST_IMAGE") == "" {
		t.Skip("no rootful podman socket at " + sock + " (and HARNESS_TEST_IMAGE loaded into podman)")
	}
	px := &netproxy.Proxy{Decide: func(context.Context, string, int) netproxy.ConnVerdict {
		return netproxy.ConnVerdict{Reason: "no rule allows it"}
	}}
	sb, _ := openSession(t, sandbox.BackendPodman, t.TempDir(), sandbox.WithEnv(testEnv), sandbox.WithProxy(px))
	r, err := sb.Run(context.Background(), sandbox.Cmd{Script: `grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/self/status; ls /sys/class/net
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
	p2, err := walls.NewPolicy(walls.PolicyOptions{Project: comma})
	if err != nil {
		t.Fatal(err)
	}
	if sb2, err := sandbox.Open(context.Background(), walls.NewLive(p2), sandbox.BackendPodman); err == nil {
		sb2.Close()
		t.Error("podman mounted a project whose path it reads as options")
	} else if !strings.Contains(err.Error(), "podman cannot mount") {
		t.Errorf("the comma project: %v", err)
	}
}

// RunnerOf is sb's container runner.
func RunnerOf(sb sandbox.Sandbox) *container.Runner {
	return sandbox.Inspect(sb).Runner.(*container.Runner)
}

// testEnv is the environment the tests give the sandbox: the container
// backend's image is HARNESS_TEST_IMAGE (see .ci/run), nothing else.
func testEnv(k string) string {
	if k == container.ImageEnv {
		return os.Getenv("HARNESS_TEST_IMAGE")
	}
	return ""
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func content(p string) string { b, _ := os.ReadFile(p); return string(b) }

func openBench(b *testing.B, backend string, opts ...sandbox.Option) sandbox.Sandbox {
	b.Helper()
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(p), backend, opts...)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb
}

// records keeps the proxy's connection records (a copy of sandbox's
// test helper: test files do not cross packages).
type records struct {
	mu  sync.Mutex
	all []netproxy.ConnRecord
}

func (r *records) add(c netproxy.ConnRecord) { r.mu.Lock(); r.all = append(r.all, c); r.mu.Unlock() }

// await returns the first record from the from-th on that satisfies ok
// (nil: any), waiting for it; it fails the test when none comes.
func (r *records) await(t *testing.T, from int, ok func(netproxy.ConnRecord) bool) netproxy.ConnRecord {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r.mu.Lock()
		for _, c := range r.all[min(from, len(r.all)):] {
			if ok == nil || ok(c) {
				r.mu.Unlock()
				return c
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no connection recorded (from the %d-th on) as awaited", from)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
