//go:build unix

package sessionlog

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOneWriter: a log open for writing refuses a second writer (another
// --continue), saying which process holds it, and takes one again once
// the first closes; readers are never refused.
func TestOneWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName(time.Now(), "abc"))
	first, err := Create(path, Meta{ID: "abc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Append(path, nil)
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "start a new one") {
		t.Fatalf("a second writer: %v, want a LockedError saying what to do", err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatalf("a reader was refused: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := Append(path, nil)
	if err != nil {
		t.Fatalf("after the first writer closed: %v", err)
	}
	second.Close()
}

// TestOneWriterNamesTheProcess: held by another process, the refusal
// names its PID (from /proc/locks).
func TestOneWriterNamesTheProcess(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("util-linux flock is not installed")
	}
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no /proc/locks here")
	}
	path := filepath.Join(t.TempDir(), FileName(time.Now(), "abc"))
	l, err := Create(path, Meta{ID: "abc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	holder := exec.Command(flock, "--exclusive", path, "sh", "-c", "echo locked; exec sleep 30")
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_, err = Append(path, nil)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("held by process %d: %v, want a LockedError", holder.Process.Pid, err)
	}
	if le.PID == 0 || !strings.Contains(err.Error(), "PID "+strconv.Itoa(le.PID)) {
		t.Errorf("the refusal names no process: %v", err)
	}
}
