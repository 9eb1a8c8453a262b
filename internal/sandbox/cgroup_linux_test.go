package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCgroupKill: where a cgroup v2 is writable (root here), each command
// (or the launcher) runs in a child cgroup that the host sees populated
// while it runs and that is gone after it; the landlock backend without
// namespaces, where a process that calls setsid leaves the process group
// the kill scan follows, loses that process to cgroup.kill at the
// command's end, asserted on the host.
func TestCgroupKill(t *testing.T) {
	if !cgroupWritable() {
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
			ents, _ := os.ReadDir(s.cg.dir)
			for _, e := range ents {
				if e.IsDir() && strings.HasPrefix(e.Name(), "command-") {
					t.Errorf("a command's cgroup %s stayed after it", e.Name())
				}
			}
			dir := s.cg.dir
			sb.Close()
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the session's cgroup %s stayed after Close", dir)
			}
		})
	}
}

// TestStaleCgroups: a dead harness's empty cgroups are removed at the next
// start; a live harness's stay.
func TestStaleCgroups(t *testing.T) {
	if !cgroupWritable() {
		t.Skip("no writable cgroup v2 here")
	}
	own, err := ownCgroupDir()
	if err != nil {
		t.Fatal(err)
	}
	dead := own + "/" + sessionPrefix + "999999999-1"
	live := own + fmt.Sprintf("/%s%d-stale-test", sessionPrefix, os.Getpid())
	for _, d := range []string{dead, dead + "/command-1", live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(dead + "/command-1"); os.Remove(dead); os.Remove(live) })
	s := openCgroup(0, 0)
	if s == nil {
		t.Fatal("no session cgroup")
	}
	s.close()
	if _, err := os.Stat(dead); err == nil {
		t.Error("a dead harness's cgroup stayed")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a live harness's cgroup was removed")
	}
}
