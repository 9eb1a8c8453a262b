package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// boundsEnv asks a re-executed test binary (as nobody) to run
// TestResourceBounds' checks for the named variant.
const boundsEnv = "HARNESS_SANDBOX_TEST_BOUNDS"

// boundsMode is TestMain's hook: with boundsEnv set, the binary checks
// the bounds and exits.
func boundsMode() {
	v := os.Getenv(boundsEnv)
	if v == "" {
		return
	}
	if p := checkBounds(v); p != "" {
		fmt.Println("bounds escaped:", p)
		os.Exit(1)
	}
	fmt.Println("bounds held")
	os.Exit(0)
}

// checkBounds runs a command past each bound under tight limits and
// returns what went wrong ("" when both held).
func checkBounds(variant string) string {
	backend, opts := testVariant(variant)
	base, err := os.MkdirTemp(outsideBase(), "harness-bounds-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(base)
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	p, err := NewPolicy(PolicyOptions{Project: proj, Environ: []string{"PATH=/usr/bin:/bin", MaxProcsEnv + "=64", MaxMemoryEnv + "=1G"}})
	if err != nil {
		return err.Error()
	}
	sb, err := Open(context.Background(), p, backend, opts...)
	if err != nil {
		return err.Error()
	}
	defer sb.Close()
	ctx := context.Background()
	tag := fmt.Sprintf("bounds-%d", time.Now().UnixNano())
	// 200 sleepers at once: past the process bound.
	r, err := sb.Run(ctx, Cmd{Script: "i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo forked-all; : " + tag + "; wait", Timeout: 60 * time.Second})
	if err != nil {
		return err.Error()
	}
	var problems []string
	if bytes.Contains(r.Output, []byte("forked-all")) && r.ExitCode == 0 && !strings.Contains(string(r.Output), "process") {
		problems = append(problems, "200 processes ran under a bound of 64: "+firstLine(r.Output))
	}
	if !strings.Contains(string(r.Output), "process limit") {
		problems = append(problems, "no word of the process limit in the result: "+lastLine(r.Output))
	}
	if n := survivors(tag, 3*time.Second); n > 0 {
		problems = append(problems, fmt.Sprintf("%d of its processes survived", n))
	}
	// 1.5 GiB in one process: past the memory bound (1 GiB, not less: the
	// supervisor itself lives under it, and a -race build needs more).
	r, err = sb.Run(ctx, Cmd{Script: "head -c 1610612736 /dev/zero | tr '\\0' x | { v=$(cat); echo got ${#v}; }", Timeout: 60 * time.Second})
	if err != nil {
		return err.Error()
	}
	if bytes.Contains(r.Output, []byte("got 1610612736")) {
		problems = append(problems, "a shell held 1.5 GiB under a bound of 1 GiB")
	}
	// Ordinary work still runs.
	if r, err := sb.Run(ctx, Cmd{Script: "echo fine"}); err != nil || !bytes.Contains(r.Output, []byte("fine")) {
		problems = append(problems, "an ordinary command failed under the bounds")
	}
	return strings.Join(problems, "; ")
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestResourceBounds: a command past the process or memory bound fails and
// says so, as root and as nobody, with and without the launcher.
func TestResourceBounds(t *testing.T) {
	variants := []string{BackendBwrap, BackendBwrap + perCommand, BackendLandlock}
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			backend, _ := testVariant(v)
			requireBackend(t, backend)
			if p := checkBounds(v); p != "" {
				t.Errorf("uid %d: %s", os.Getuid(), p)
			}
		})
	}
	if os.Getuid() != 0 {
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Missing(t, testenv.Setpriv, "setpriv is not installed (apt-get install util-linux)")
	}
	bin := copyTestBinary(t)
	for _, v := range variants {
		t.Run("nobody/"+v, func(t *testing.T) {
			backend, _ := testVariant(v)
			requireBackend(t, backend)
			cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin)
			cmd.Env = append(os.Environ(), boundsEnv+"="+v, "HOME=/nonexistent")
			cmd.Dir = "/"
			out, err := cmd.CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("bounds held")) {
				t.Errorf("as nobody: %v\n%s", err, out)
			}
		})
	}
}

// copyTestBinary copies the test binary where nobody can run it.
func copyTestBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(outsideBase(), "harness-test-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
