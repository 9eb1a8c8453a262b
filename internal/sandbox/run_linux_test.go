package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openTest opens backend on a fresh project outside /tmp's view.
func openTest(t *testing.T, backend string, mod func(*Policy)) (Sandbox, string) {
	t.Helper()
	requireBackend(t, backend)
	base, err := os.MkdirTemp(outsideBase(), "harness-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(filepath.Join(proj, ".git", "hooks"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	home, _ := os.UserHomeDir()
	p, err := NewPolicy(PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(p)
	}
	sb, err := Open(context.Background(), p, backend)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, proj
}

var allBackends = []string{BackendNone, BackendBwrap, BackendLandlock}

func TestRunBasics(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, func(p *Policy) { p.OutputLimit = 4096 })
			ctx := context.Background()

			r, err := sb.Run(ctx, Cmd{Script: "pwd; read x; echo \"stdin:[$x]\"; exit 3"})
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != 3 || !strings.Contains(string(r.Output), proj) || !strings.Contains(string(r.Output), "stdin:[]") {
				t.Errorf("exit %d, output %q: want exit 3, the project as cwd and an empty stdin", r.ExitCode, r.Output)
			}

			// yes is bounded by the output limit, and the timeout ends it.
			r, err = sb.Run(ctx, Cmd{Script: "yes", Timeout: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if !r.TimedOut || r.ExitCode != TimeoutExit {
				t.Errorf("yes: timed out %v, exit %d", r.TimedOut, r.ExitCode)
			}
			if len(r.Output) > 4096 || r.Truncated == 0 {
				t.Errorf("yes: kept %d bytes, dropped %d: want at most 4096 kept", len(r.Output), r.Truncated)
			}

			// Streaming goes to the writers, not the buffer.
			var out, errb bytes.Buffer
			r, err = sb.Run(ctx, Cmd{Script: "echo out; echo err >&2", Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != "out\n" || errb.String() != "err\n" || len(r.Output) != 0 {
				t.Errorf("streams: out %q err %q buffer %q", out.String(), errb.String(), r.Output)
			}
		})
	}
}

func TestTimeoutMessage(t *testing.T) {
	sb, _ := openTest(t, BackendNone, nil)
	r, err := sb.Run(context.Background(), Cmd{Script: "sleep 30", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || r.ExitCode != 124 || !strings.Contains(string(r.Output), "Narrow the command") {
		t.Errorf("timed out %v, exit %d, output %q", r.TimedOut, r.ExitCode, r.Output)
	}
}

// TestTampered: without walls (none), a write to .git must at least be
// reported after the command.
func TestTampered(t *testing.T) {
	sb, proj := openTest(t, BackendNone, nil)
	r, err := sb.Run(context.Background(), Cmd{Script: "echo evil > .git/hooks/pre-commit; echo x >> .git/config; echo fine > ok.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(proj, ".git", "config"), filepath.Join(proj, ".git", "hooks", "pre-commit")}
	if strings.Join(r.Tampered, ",") != strings.Join(want, ",") {
		t.Errorf("Tampered = %v, want %v", r.Tampered, want)
	}
	r, _ = sb.Run(context.Background(), Cmd{Script: "echo fine >> ok.txt"})
	if len(r.Tampered) != 0 {
		t.Errorf("an innocent command reported tampering: %v", r.Tampered)
	}
}

// TestGoBuildInside: compilers need a writable temporary directory and
// cache; go build must work under the walls.
func TestGoBuildInside(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	if testing.Short() {
		t.Skip("compiles the runtime in a fresh cache")
	}
	sb, proj := openTest(t, BackendBwrap, nil)
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n\nfunc main() { println(\"built inside\") }\n"), 0o644)
	r, err := sb.Run(context.Background(), Cmd{Script: shellQuote(goBin) + " build -o /tmp/hello . && /tmp/hello", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || !strings.Contains(string(r.Output), "built inside") {
		t.Errorf("go build inside the sandbox: exit %d\n%s", r.ExitCode, r.Output)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p, err := NewPolicy(PolicyOptions{Project: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), p, "chroot"); err == nil || !strings.Contains(err.Error(), "unknown sandbox backend") {
		t.Errorf("Open(chroot) = %v", err)
	}
	if _, err := Open(context.Background(), p, BackendSeatbelt); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open(seatbelt) on Linux = %v, want ErrUnavailable", err)
	}
	name, reason := Detect()
	if name == "" || reason == "" {
		t.Skipf("no backend here: %s", reason)
	}
	sb, err := Open(context.Background(), p, BackendAuto)
	if err != nil {
		t.Fatal(err)
	}
	if sb.Backend() != name {
		t.Errorf("auto opened %s, Detect said %s", sb.Backend(), name)
	}
	tmp := p.TempDir
	if s, ok := sb.(*session); ok {
		tmp = s.tmp
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("private temporary directory %s missing: %v", tmp, err)
	}
	sb.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("Close left %s behind", tmp)
	}
}

// TestSelfCheckRefuses: a backend whose walls do not hold is refused.
func TestSelfCheckRefuses(t *testing.T) {
	p, err := NewPolicy(PolicyOptions{Project: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	leaky := &None{P: p}
	if err := selfCheck(context.Background(), leaky); !errors.Is(err, ErrUnavailable) {
		t.Errorf("selfCheck on an unwalled backend = %v, want ErrUnavailable", err)
	}
}
