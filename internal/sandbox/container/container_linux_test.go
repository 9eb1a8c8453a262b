package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/engine"
	"github.com/harness-dev/harness/internal/testenv"
)

// requireDocker skips (or fails, when CI requires docker) unless an engine
// answers and HARNESS_TEST_IMAGE is there. The tests give the backend that
// image as HARNESS_IMAGE through WithEnv(testEnv).
func requireDocker(t testing.TB) {
	t.Helper()
	img := os.Getenv("HARNESS_TEST_IMAGE")
	if img == "" {
		testenv.Missing(t, testenv.Docker, "HARNESS_TEST_IMAGE is not set (see .ci/run)")
	}
	cli, err := engine.New("")
	if err != nil {
		testenv.Missing(t, testenv.Docker, err.Error())
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		testenv.Missing(t, testenv.Docker, "the engine does not answer: "+err.Error())
	}
	if _, err := cli.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, testenv.Docker, "image "+img+": "+err.Error())
	}
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
	for _, nr := range inner.DeniedSyscalls {
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
	if cloneFlags != inner.CloneNamespaces {
		t.Errorf("clone rules cover flags %#x, want every namespace flag %#x", cloneFlags, uint64(inner.CloneNamespaces))
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
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	// With the default image: the host's /usr and /etc, read-only, its
	// password hashes behind /dev/null.
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o700)
	gs, err := gitshadow.Open(p, tmp)
	if err != nil || gs == nil {
		t.Fatalf("git shadows: %v", err)
	}
	defer gs.Close()
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
		p.Project():                                  "bind",
		filepath.Join(p.Project(), ".agents"):        "bind,ro",
		filepath.Join(p.Project(), ".git"):           "bind from " + gs.Shadows[0].Shadow,
		filepath.Join(p.Project(), ".git", "config"): "bind,ro",
		filepath.Join(p.Project(), ".git", "hooks"):  "bind,ro",
		// The real objects, read-only: the shadow's own objects
		// directory takes new ones (append-only history).
		filepath.Join(p.Project(), ".git", "objects", inner.GitObjectsBase): "bind,ro from " + filepath.Join(p.Project(), ".git", "objects"),
		"/etc":        "bind,ro",
		"/usr":        "bind,ro",
		"/etc/shadow": "bind,ro from /dev/null",
		"/tmp":        "bind from " + tmp,
		Helper:        "bind,ro from /bin/true",
	}
	for target, kind := range want {
		if got[target] != kind {
			t.Errorf("%s: mounted %q, want %q", target, got[target], kind)
		}
	}
	for target := range got {
		if walls.Within(target, home) || target == "/" || walls.Within(target, "/root") || walls.Within(target, "/var") || walls.Within(target, "/run") {
			t.Errorf("%s is mounted: only what the policy names may be", target)
		}
	}
	for i := 1; i < len(ms); i++ {
		if depth(ms[i].Target) < depth(ms[i-1].Target) {
			t.Errorf("%s is mounted after %s, beneath which it lies", ms[i].Target, ms[i-1].Target)
		}
	}
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
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, backend.ErrUnavailable)) {
			t.Errorf("%q -> %q: %v", tc.src, tc.dst, err)
		}
	}
}

// TestProjectImageBuildsWithoutNetwork: harness.Dockerfile is the
// project's, which the agent can write, so its RUN steps get no network:
// a build that sees an interface besides loopback fails, and one that
// needs none builds.
func TestProjectImageBuildsWithoutNetwork(t *testing.T) {
	requireDocker(t)
	cli, err := engine.New("")
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

// configText is a repository's .git/config.
const configText = "[core]\n\trepositoryformatversion = 0\n"
