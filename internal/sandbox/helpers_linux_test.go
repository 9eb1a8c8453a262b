package sandbox

import (
	"bytes"
	"os"
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
