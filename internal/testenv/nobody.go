package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Nobody is the unprivileged user the walls are tested as beside root.
const Nobody = "65534"

// NobodyBinary prepares to run this test binary again as nobody: it
// needs root (to switch) and setpriv, and the binary copied out of the
// root-only build directory into a fresh directory under dir ("": the
// system's temporary directory), removed when t ends. covered says which
// test covers the unprivileged case when this process is not root.
func NobodyBinary(t testing.TB, dir, covered string) (setpriv, bin string) {
	t.Helper()
	if os.Getuid() != 0 {
		Missing(t, Root, "already unprivileged: "+covered+" covers this uid, but not the switch from root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		Missing(t, Setpriv, "setpriv (util-linux) is not installed; cannot switch to an unprivileged user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(dir, "harness-test-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	os.Chmod(d, 0o755)
	bin = filepath.Join(d, filepath.Base(exe))
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return setpriv, bin
}

// AsNobody is bin run with args as nobody (no groups), in /, with HOME
// unusable and env added to this process's environment.
func AsNobody(setpriv, bin string, args []string, env ...string) *exec.Cmd {
	argv := append([]string{"--reuid=" + Nobody, "--regid=" + Nobody, "--clear-groups", "--", bin}, args...)
	cmd := exec.Command(setpriv, argv...)
	cmd.Env = append(append(os.Environ(), "HOME=/nonexistent"), env...)
	cmd.Dir = "/"
	return cmd
}
