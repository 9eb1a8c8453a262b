package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/cgroup"

	"golang.org/x/sys/unix"
)

// TestCgroupKill: where a cgroup v2 is writable (root here), each command
// (or the launcher) runs in a child cgroup that the host sees populated
// while it runs and that is gone after it; the landlock backend without
// namespaces, where a process that calls setsid leaves the process group
// the kill scan follows, loses that process to cgroup.kill at the
// command's end, asserted on the host.
func TestCgroupKill(t *testing.T) {
	if !cgroup.Writable() {
		t.Skip("no writable cgroup v2 here (as root on a cgroup v2 host there is one); the rlimit path is TestResourceBounds")
	}
	for _, v := range []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand, BackendLandlock + "/no-userns"} {
		t.Run(v, func(t *testing.T) {
			if b, ok := strings.CutSuffix(v, "/no-userns"); ok {
				v = b
				noUserNamespaces = true
				t.Cleanup(func() { noUserNamespaces = false })
			}
			sb, _ := openTest(t, v, nil)
			s := sb.(*instance)
			if s.cg == nil {
				t.Fatal("a cgroup v2 is writable here but the session has none")
			}
			tag := fmt.Sprintf("cg-%d", time.Now().UnixNano())
			r, err := sb.Run(context.Background(), Cmd{Script: "setsid sh -c 'sleep 300; : " + tag + "' </dev/null >/dev/null 2>&1 & " +
				"cat /proc/self/cgroup; echo started"})
			if err != nil || !bytes.Contains(r.Output, []byte("started")) {
				t.Fatalf("%v: %s", err, r.Output)
			}
			if n := survivors(tag, 3*time.Second); n > 0 {
				t.Errorf("%d processes of the command outlived it", n)
			}
			ents, _ := os.ReadDir(s.cg.Dir())
			for _, e := range ents {
				if e.IsDir() && strings.HasPrefix(e.Name(), "command-") {
					t.Errorf("a command's cgroup %s stayed after it", e.Name())
				}
			}
			dir := s.cg.Dir()
			sb.Close()
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the session's cgroup %s stayed after Close", dir)
			}
		})
	}
}

// TestPidfdPid: the host finds a placed supervisor by the pidfd it sends,
// so the pid read from the pidfd must be the process's own.
func TestPidfdPid(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skipf("no pidfd_open here: %v", err)
	}
	defer unix.Close(fd)
	if got := pidfdPid(fd); got != cmd.Process.Pid {
		t.Errorf("pidfdPid = %d, want %d", got, cmd.Process.Pid)
	}
	if got := pidfdPid(0); got != 0 {
		t.Errorf("pidfdPid of stdin = %d, want 0 (not a pidfd)", got)
	}
}
