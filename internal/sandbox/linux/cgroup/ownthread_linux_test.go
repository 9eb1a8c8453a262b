package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/testenv"
	"golang.org/x/sys/unix"
)

const mainThreadEnv = "HARNESS_CGROUP_TEST_MAIN_THREAD"

// In the child process of TestOwnDirWhileTheMainThreadIsInside the main
// goroutine keeps the main thread (the thread group leader, whose
// cgroups /proc/self/cgroup shows) from init on.
func init() {
	if os.Getenv(mainThreadEnv) != "" {
		runtime.LockOSThread()
	}
}

// TestMain runs the child of TestOwnDirWhileTheMainThreadIsInside on the
// main goroutine, locked to the main thread since init.
func TestMain(m *testing.M) {
	if os.Getenv(mainThreadEnv) != "" {
		mainThreadChild()
	}
	os.Exit(m.Run())
}

// TestOwnDirWhileTheMainThreadIsInside: while the main thread is inside a
// command's v1 cgroup (Start's clone, when the goroutine doing it runs on
// the main thread), a session opened from another thread still finds the
// harness's own cgroups, makes its own beside the first session's, and
// its threads go back there. Before, a parallel run of the permission
// corpus had sessions nested inside another's probe cgroup, and the host
// git commands their threads forked were killed with that probe.
func TestOwnDirWhileTheMainThreadIsInside(t *testing.T) {
	testenv.NeedRoot(t)
	if !Writable() {
		testenv.Missing(t, testenv.Root, "no writable cgroup although the test runs as root")
	}
	want, err := OwnV1Dir("pids")
	if err != nil {
		t.Skip("no cgroup v1 pids hierarchy here (the v2 tree takes whole processes, never one thread)")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainThreadEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	if got["inside"] == "" || got["inside"] == want {
		t.Fatalf("the main thread did not enter a child cgroup (the case this test is about did not arise):\n%s", out)
	}
	if got["own"] != want {
		t.Errorf("with the main thread in %s, a session took %q for its own cgroup, want %s", got["inside"], got["own"], want)
	}
	if !strings.HasPrefix(got["second"], want+"/") || strings.HasPrefix(got["second"], got["inside"]) {
		t.Errorf("the second session's cgroup is %q: want it beside the first's, under %s", got["second"], want)
	}
}

// mainThreadChild runs on the main thread (locked in init): it puts that
// thread in a command's cgroup, and from another thread asks where the
// harness's own cgroup is and opens a second session.
func mainThreadChild() {
	if unix.Gettid() != unix.Getpid() {
		fmt.Println("error=not on the main thread")
		os.Exit(1)
	}
	s := Open(1024, 1<<30)
	if s == nil || len(s.v1) == 0 {
		fmt.Println("error=no v1 session")
		os.Exit(1)
	}
	c := s.CommandChild()
	if err := enterTasks(c.tasks); err != nil {
		fmt.Println("error=", err)
		os.Exit(1)
	}
	fmt.Printf("inside=%s\n", c.dirs[0])
	type result struct {
		own, second string
	}
	res := make(chan result)
	go func() {
		runtime.LockOSThread() // another thread than main's, which is locked
		own, _ := OwnV1Dir("pids")
		r := result{own: own}
		if s2 := Open(1024, 1<<30); s2 != nil {
			for _, g := range s2.v1 {
				if g.ctrl == "pids" {
					r.second = g.dir
				}
			}
			s2.Close()
		}
		res <- r
	}()
	r := <-res
	fmt.Printf("own=%s\nsecond=%s\n", r.own, r.second)
	if err := c.leave(); err != nil {
		fmt.Println("error=", err)
		os.Exit(1)
	}
	c.Kill()
	s.Close()
	os.Exit(0)
}
