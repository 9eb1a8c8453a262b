package doors

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestDoors runs the battery with the real bwrap: every probe must run
// and hold, as the user the tests run as (root in CI).
func TestDoors(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	var out bytes.Buffer
	n, err := Run(context.Background(), sandbox.BackendBwrap, &out)
	t.Logf("uid %d:\n%s", os.Getuid(), out.String())
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d doors let an attack through", n)
	}
	for _, name := range Names() {
		if !strings.Contains(out.String(), "\nheld     "+name) {
			t.Errorf("the probe %q did not run and hold", name)
		}
	}
}

// TestDoorsUnprivileged re-runs the battery as nobody (uid 65534): the
// doors must not hold only because harness runs as root.
func TestDoorsUnprivileged(t *testing.T) {
	testenv.Slow(t)
	if os.Getuid() != 0 {
		testenv.Missing(t, testenv.Root, "already unprivileged: TestDoors covers this uid, but not the switch from root")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	setpriv, bin := testenv.NobodyBinary(t, backend.OutsideBase(), "TestDoors")
	cmd := testenv.AsNobody(setpriv, bin, nil, doorsEnv+"="+sandbox.BackendBwrap)
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Errorf("the battery as nobody: %v", err)
	}
	for _, name := range Names() {
		if !strings.Contains(string(out), "\nheld     "+name) {
			t.Errorf("the probe %q did not run and hold as nobody", name)
		}
	}
}
