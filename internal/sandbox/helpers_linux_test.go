package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/testenv"
)

// requireBackend skips a test of backend where it cannot run, or fails
// it when HARNESS_REQUIRE names what is missing (CI does): a bwrap that is
// installed but cannot create namespaces counts as missing.
func requireBackend(t *testing.T, backend string) {
	t.Helper()
	switch backend {
	case BackendBwrap:
		if name, why := detected(); name != BackendBwrap {
			testenv.Missing(t, testenv.Bwrap, why+" (apt-get install bubblewrap; user namespaces must be allowed)")
		}
	case BackendLandlock:
		if inner.LandlockABI() == 0 {
			testenv.Missing(t, testenv.Landlock, "this kernel has no Landlock")
		}
	case BackendDocker:
		requireDocker(t)
	}
}

var detectOnce = sync.OnceValues(Detect)

// detected is Detect, run once per test binary.
func detected() (string, string) { return detectOnce() }

// TestUserNamespaces: the landlock backend's mount carve-outs and private
// /tmp need user namespaces; where they are restricted (Ubuntu 24.04's
// AppArmor default) the backend degrades, so CI must say so, not pass.
func TestUserNamespaces(t *testing.T) {
	if !userNamespaces() {
		testenv.Missing(t, testenv.Userns, "cannot create a user and PID namespace (kernel.unprivileged_userns_clone or an AppArmor restriction)")
	}
}

// unprivilegedBinary returns setpriv and a copy of the test binary that
// nobody (uid 65534) may run, for a test that re-runs part of itself
// unprivileged; covered names the test that covers an unprivileged run
// already.
func unprivilegedBinary(t *testing.T, covered string) (setpriv, bin string) {
	t.Helper()
	if os.Getuid() != 0 {
		testenv.Missing(t, testenv.Root, "already unprivileged: "+covered+" covers this uid, but not the switch from root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Missing(t, testenv.Setpriv, "setpriv (util-linux) is not installed; cannot switch to an unprivileged user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary sits in a root-only build directory: copy it where
	// nobody can execute it.
	dir, err := os.MkdirTemp(outsideBase(), "harness-test-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "sandbox.test")
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

// asNobody is bin (from unprivilegedBinary) run as nobody, in /, with
// env added to this process's environment.
func asNobody(setpriv, bin string, env ...string) *exec.Cmd {
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin)
	cmd.Env = append(append(os.Environ(), "HOME=/nonexistent"), env...)
	cmd.Dir = "/"
	return cmd
}

// survivors counts host processes whose command line holds marker, waiting
// up to grace for the kernel to finish killing a namespace.
func survivors(marker string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if strings.Trim(e.Name(), "0123456789") != "" {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.Contains(b, []byte(inner.ProbeArg)) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}
