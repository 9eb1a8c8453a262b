package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillTreeAfterReap: once a command's process is reaped, its pid,
// and the group number it led, may be another process's. killTree must
// then leave that group alone. The reuse is made to happen here by
// pointing the reaped process's Pid at a live stranger leading its own
// group.
func TestKillTreeAfterReap(t *testing.T) {
	stranger := exec.Command("sleep", "60")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stranger.Process.Kill(); stranger.Wait() }()

	done := exec.Command("true")
	done.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	done.Process.Pid = stranger.Process.Pid // the reaped pid, reused
	killTree(done.Process, treeGroup)
	time.Sleep(50 * time.Millisecond)
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", stranger.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
		t.Fatalf("killTree of a reaped process killed the group now holding its number: %s %v", b, err)
	}

	// Not yet reaped: the whole group dies.
	live := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	live.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := live.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatal(err)
	}
	killTree(live.Process, treeGroup)
	live.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break // gone, or dead and not yet reaped by its new parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("killTree left the live command's child running: %s", b)
		}
	}
}
