package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// TestSandboxHelperBinary: installed beside harness and of its build,
// harness-sandbox is what a sandbox runs inside (its start skips the init
// of everything else harness links); one of another build is never run,
// and harness re-executes itself instead. Root: the launcher is not
// dumpable, so only root reads which binary it is.
func TestSandboxHelperBinary(t *testing.T) {
	testenv.NeedRoot(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	harness := harnessBinary(t)
	helper := filepath.Join(filepath.Dir(harness), "harness-sandbox")
	if _, err := os.Stat(helper); err != nil {
		t.Fatalf("the build did not make the helper: %v", err)
	}
	if got := runningAs(t, harness, helper); got != helper {
		t.Errorf("the sandbox ran %q inside, want the helper %q", got, helper)
	}

	// A helper of another build beside a copy of harness: not run.
	dir := t.TempDir()
	copyHarness := filepath.Join(dir, "harness")
	data, err := os.ReadFile(harness)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyHarness, data, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags=-X github.com/harness-dev/harness/internal/sandbox/linux/inner.wireVersion=other",
		"-o", filepath.Join(dir, "harness-sandbox"), "./cmd/harness-sandbox")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building another helper: %v\n%s", err, out)
	}
	if got := runningAs(t, copyHarness, filepath.Join(dir, "harness-sandbox")); got != copyHarness {
		t.Errorf("with a helper of another build beside it, the sandbox ran %q inside, want harness itself", got)
	}

	// The same build's helper, but writable by others: never run, not
	// even to ask it its shape.
	dir2 := t.TempDir()
	for _, f := range []string{harness, helper} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir2, filepath.Base(f)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir2, "harness-sandbox"), 0o777)
	if got := runningAs(t, filepath.Join(dir2, "harness"), filepath.Join(dir2, "harness-sandbox")); got != filepath.Join(dir2, "harness") {
		t.Errorf("with a world-writable helper beside it, the sandbox ran %q inside, want harness itself", got)
	}
}

// runningAs runs a sandboxed sleep through harness and returns which of
// harness and helper the sandbox's launcher runs as (by file identity: it
// sees the binary at a path of its own).
func runningAs(t *testing.T, harness, helper string) string {
	t.Helper()
	proj := t.TempDir()
	cmd := exec.Command(harness, "sandbox", "--sandbox", "bwrap", "--project", proj, "--", "sleep", "4")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	hi, err1 := os.Stat(harness)
	pi, err2 := os.Stat(helper)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if strings.Trim(e.Name(), "0123456789") != "" {
				continue
			}
			if c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); !strings.Contains(string(c), "__harness-sandbox-launcher") {
				continue
			}
			st, err := os.Stat("/proc/" + e.Name() + "/exe")
			switch {
			case err != nil:
			case os.SameFile(st, pi):
				return helper
			case os.SameFile(st, hi):
				return harness
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no sandbox launcher of %s found", harness)
	return ""
}
