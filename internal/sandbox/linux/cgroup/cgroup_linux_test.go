package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestStaleCgroups: a dead harness's empty cgroups are removed at the next
// start, in the v2 tree and in the v1 pids and memory hierarchies; a live
// harness's stay.
func TestStaleCgroups(t *testing.T) {
	if !Writable() {
		t.Skip("no writable cgroup here")
	}
	var owns []string
	if own, err := OwnDir(); err == nil {
		owns = append(owns, own)
	}
	for _, ctrl := range []string{"pids", "memory"} {
		if own, err := OwnV1Dir(ctrl); err == nil {
			owns = append(owns, own)
		}
	}
	for _, own := range owns {
		dead := own + "/" + backend.SessionPrefix + "999999999-1"
		live := own + fmt.Sprintf("/%s%d-stale-test", backend.SessionPrefix, os.Getpid())
		if err := os.Mkdir(dead, 0o755); err != nil {
			continue // not writable here: Open makes nothing here either
		}
		for _, d := range []string{dead + "/command-1", live} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.Remove(dead + "/command-1"); os.Remove(dead); os.Remove(live) })
		s := Open(1024, 1<<30)
		if s == nil {
			t.Fatal("no session cgroup")
		}
		s.Close()
		if _, err := os.Stat(dead); err == nil {
			t.Errorf("a dead harness's cgroup %s stayed", dead)
		}
		if _, err := os.Stat(live); err != nil {
			t.Errorf("a live harness's cgroup %s was removed", live)
		}
	}
}

// TestCgroupLimitFiles: the limits a child gets and the counts read back,
// against a temporary directory laid out as each cgroup version's files.
// The v2 path cannot run for real on a hybrid host (v2 there has no
// controllers; a container's cgroup namespace gives the same v1 tree), so
// this is its check here; TestResourceBounds runs v1 on the real kernel.
func TestCgroupLimitFiles(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("v2", func(t *testing.T) {
		s := &Session{dir: t.TempDir(), pids: true, memory: true, maxProcs: 100, maxMemory: 1 << 30}
		c, err := s.child("command", true, false)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(c.fd)
		for file, want := range map[string]string{"pids.max": "100", "memory.max": "1073741824", "memory.swap.max": "0"} {
			if got := read(filepath.Join(c.dir, file)); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
		if c.procsHit() || c.oomKills() != 0 {
			t.Error("limits reported hit before any event")
		}
		os.WriteFile(filepath.Join(c.dir, "pids.events"), []byte("max 3\n"), 0o644)
		os.WriteFile(filepath.Join(c.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n"), 0o644)
		if !c.procsHit() || c.oomKills() != 2 {
			t.Errorf("procsHit %v, oomKills %d: want true, 2", c.procsHit(), c.oomKills())
		}
		var b bytes.Buffer
		c.Report(&b, true)
		for _, want := range []string{"process limit (100", "cgroup v2 pids.max", "memory limit (1024 MiB", "cgroup v2 memory.max", "killed 2 of its processes"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		}
	})
	t.Run("v1", func(t *testing.T) {
		pids, mem := t.TempDir(), t.TempDir()
		s := &Session{v1: []v1Group{{ctrl: "pids", dir: pids}, {ctrl: "memory", dir: mem}}, maxProcs: 64, maxMemory: 512 << 20}
		// memsw exists where swap is accounted: the child must set it too.
		if err := os.Mkdir(filepath.Join(mem, "command-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(mem, "command-1", "memory.memsw.limit_in_bytes"), []byte("9223372036854771712\n"), 0o644)
		for _, d := range []string{pids, mem} {
			os.MkdirAll(filepath.Join(d, "command-1"), 0o755)
			os.WriteFile(filepath.Join(d, "command-1", "tasks"), nil, 0o644)
		}
		// Mkdir of an existing directory fails: make the child by hand,
		// as child does after its mkdir.
		for _, g := range s.v1 {
			if err := s.limitV1(g.ctrl, filepath.Join(g.dir, "command-1")); err != nil {
				t.Fatal(err)
			}
		}
		for file, want := range map[string]string{
			filepath.Join(pids, "command-1", "pids.max"):                   "64",
			filepath.Join(mem, "command-1", "memory.limit_in_bytes"):       "536870912",
			filepath.Join(mem, "command-1", "memory.memsw.limit_in_bytes"): "536870912",
		} {
			if got := read(file); got != want {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
		c := &Child{s: s, fd: -1, v1Child: v1Child{dirs: []string{filepath.Join(pids, "command-1"), filepath.Join(mem, "command-1")}}}
		// v1 keeps pids.events at 0: the peak at the limit says it.
		os.WriteFile(filepath.Join(c.dirs[0], "pids.events"), []byte("max 0\n"), 0o644)
		os.WriteFile(filepath.Join(c.dirs[0], "pids.peak"), []byte("63\n"), 0o644)
		if c.procsHit() {
			t.Error("a peak under the limit reported as hit")
		}
		os.WriteFile(filepath.Join(c.dirs[0], "pids.peak"), []byte("64\n"), 0o644)
		os.WriteFile(filepath.Join(c.dirs[1], "memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"), 0o644)
		if !c.procsHit() || c.oomKills() != 1 {
			t.Errorf("procsHit %v, oomKills %d: want true, 1", c.procsHit(), c.oomKills())
		}
		var b bytes.Buffer
		c.Report(&b, false)
		for _, want := range []string{"forks past it failed", "cgroup v1 pids.max", "cgroup v1 memory.limit_in_bytes"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		}
	})
}

// TestPlaceSupervisorStalePid: cgroup.procs takes a pid, so a supervisor
// that died before its placement may have left its pid to another
// process of the host. Here that is made to happen: the pidfd is of a
// process already reaped and the pid is a live stranger's. The stranger
// must come out alive, back in the harness's own cgroup, and the
// supervisor's cgroup must be gone; a live supervisor is placed and its
// Kill ends it.
func TestPlaceSupervisorStalePid(t *testing.T) {
	// As root (CI) a cgroup is writable: not finding one there fails.
	testenv.NeedRoot(t)
	if !Writable() {
		testenv.Missing(t, testenv.Root, "no writable cgroup although the test runs as root")
	}
	s := Open(1024, 1<<30)
	if s == nil || s.dir == "" {
		t.Skip("no cgroup v2 session here (the supervisor's placement is v2 only)")
	}
	defer s.Close()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}

	stranger := exec.Command("sleep", "60")
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stranger.Process.Kill(); stranger.Wait() }()
	dead := exec.Command("true")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	deadfd, err := unix.PidfdOpen(dead.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(deadfd)
	dead.Wait()

	if _, err := s.PlaceSupervisor(stranger.Process.Pid, deadfd); !errors.Is(err, ErrSupervisorGone) {
		t.Fatalf("placing a dead supervisor's pid: %v, want ErrSupervisorGone", err)
	}
	time.Sleep(50 * time.Millisecond) // a SIGKILL, had one been sent, lands
	if err := stranger.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the stranger holding the pid was killed: %v", err)
	}
	if got, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", stranger.Process.Pid)); !bytes.Equal(got, own) {
		t.Errorf("the stranger is in %q, want back in the harness's own %q", got, own)
	}
	if m, _ := filepath.Glob(filepath.Join(s.dir, supName+"-*")); len(m) > 0 {
		t.Errorf("the supervisor's cgroup stayed: %v", m)
	}

	// The live case: placed, and killed with its cgroup.
	fd, err := unix.PidfdOpen(stranger.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	g, err := s.PlaceSupervisor(stranger.Process.Pid, fd)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Holds(stranger.Process.Pid) {
		t.Fatal("the live supervisor is not in its cgroup")
	}
	g.Kill()
	if st, _ := stranger.Process.Wait(); st == nil || st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the placed supervisor's Kill did not kill it: %v", st)
	}
}

// TestKillSparesTheHarness: while a thread of the harness is inside a v1
// child (as Start's is while it forks a command), the child's member
// list names the harness; the session closing then must not SIGKILL it.
func TestKillSparesTheHarness(t *testing.T) {
	// As root (CI) a cgroup is writable: not finding one there fails.
	testenv.NeedRoot(t)
	if !Writable() {
		testenv.Missing(t, testenv.Root, "no writable cgroup although the test runs as root")
	}
	s := Open(1024, 1<<30)
	if s == nil || len(s.v1) == 0 {
		t.Skip("no cgroup v1 hierarchy here (the v2 tree takes whole processes, never one thread)")
	}
	c := s.CommandChild()
	if c == nil {
		t.Fatal("no v1 child")
	}
	inside, out := make(chan error), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		err := enterTasks(c.tasks)
		inside <- err
		<-out
		if c.leave() == nil {
			runtime.UnlockOSThread()
		}
	}()
	if err := <-inside; err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Members(c.dirs[0]), os.Getpid()) {
		t.Fatalf("the child's members %v do not name the harness (%d): the case this test is about did not arise", Members(c.dirs[0]), os.Getpid())
	}
	done := make(chan struct{})
	go func() { killGroup(c.dirs[0], false); close(done) }()
	time.Sleep(100 * time.Millisecond) // several rounds of the kill loop
	close(out)
	<-done
	c.Kill()
	s.Close()
	// Still here: the test binary would have died by SIGKILL otherwise.
}
