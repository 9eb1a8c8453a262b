package sandbox

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifySelfCheck: "the walls hold" is only a write inside that
// worked and a write outside that a wall denied; a sandbox that never ran
// (sandbox-exec exit 65 for a profile that does not compile) is not it.
func TestClassifySelfCheck(t *testing.T) {
	const ok = "HARNESS-INSIDE-OK\n"
	tests := []struct {
		name, backend, out string
		code               int
		escaped            bool
		want               SelfCheckKind // 0: the walls hold
	}{
		{"seatbelt denial", BackendSeatbelt, ok + "sh: /var/tmp/x/escaped: Operation not permitted\nHARNESS-OUTSIDE-EXIT=1\n", 1, false, 0},
		{"bwrap read-only bind", BackendBwrap, ok + "sh: 1: cannot create /var/tmp/x/escaped: Read-only file system\nHARNESS-OUTSIDE-EXIT=2\n", 0, false, 0},
		{"landlock", BackendLandlock, ok + "sh: 1: cannot create /var/tmp/x/escaped: Permission denied\nHARNESS-OUTSIDE-EXIT=2\n", 0, false, 0},
		{"profile does not compile", BackendSeatbelt, "sandbox-exec: syntax error at line 12\n", 65, false, CheckProfile},
		{"profile failed, quiet", BackendSeatbelt, "", 65, false, CheckProfile},
		{"inner stage failed", BackendLandlock, "harness sandbox helper: landlock: ENOSYS\n", 125, false, CheckInner},
		{"nothing ran", BackendBwrap, "bwrap: setting up uid map: Permission denied\n", 1, false, CheckNoRun},
		{"written on the host", BackendSeatbelt, ok + "HARNESS-OUTSIDE-EXIT=1\n", 1, true, CheckEscaped},
		{"write reported success", BackendSeatbelt, ok + "HARNESS-OUTSIDE-EXIT=0\n", 0, false, CheckEscaped},
		{"inside failed", BackendSeatbelt, "HARNESS-INSIDE-FAILED\nsh: x: Operation not permitted\nHARNESS-OUTSIDE-EXIT=1\n", 1, false, CheckInside},
		{"outside failed for another reason", BackendSeatbelt, ok + "sh: /var/tmp/x/escaped: No such file or directory\nHARNESS-OUTSIDE-EXIT=1\n", 1, false, CheckOtherError},
		{"stopped half way", BackendSeatbelt, ok, 137, false, CheckNoRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classifySelfCheck(tt.backend, &Result{Output: []byte(tt.out), ExitCode: tt.code}, tt.escaped)
			var se *SelfCheckError
			switch {
			case tt.want == 0 && err != nil:
				t.Errorf("walls that hold refused: %v", err)
			case tt.want != 0 && !errors.As(err, &se):
				t.Errorf("err = %v, want a SelfCheckError of kind %d", err, tt.want)
			case tt.want != 0 && se.Kind != tt.want:
				t.Errorf("kind = %d, want %d (%v)", se.Kind, tt.want, err)
			case tt.want != 0 && !errors.Is(err, ErrUnavailable):
				t.Errorf("%v does not wrap ErrUnavailable", err)
			}
		})
	}
}

// TestSelfCheckScript runs the script unwalled with a real shell: the write
// outside succeeds there, and the classification must say so.
func TestSelfCheckScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "it's escaped")
	out, _ := exec.Command(sh, "-c", selfCheckScript(target)).CombinedOutput()
	if !strings.Contains(string(out), "HARNESS-INSIDE-OK") {
		t.Fatalf("the inside write failed unwalled: %s", out)
	}
	err = classifySelfCheck(BackendSeatbelt, &Result{Output: out}, true)
	var se *SelfCheckError
	if !errors.As(err, &se) || se.Kind != CheckEscaped {
		t.Errorf("an unwalled run classified as %v", err)
	}
	// A directory that is missing fails the write for another reason.
	out, _ = exec.Command(sh, "-c", selfCheckScript(filepath.Join(dir, "missing", "x"))).CombinedOutput()
	if err := classifySelfCheck(BackendSeatbelt, &Result{Output: out}, false); !errors.As(err, &se) || se.Kind != CheckOtherError {
		t.Errorf("a missing directory classified as %v (%s)", err, out)
	}
}
