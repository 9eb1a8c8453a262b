package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/shellquote"
)

// openTest opens backend (optionally suffixed with perCommand) on a fresh
// project outside /tmp's view.
func openTest(t *testing.T, backend string, mod func(*walls.PolicyOptions)) (Sandbox, string) {
	t.Helper()
	backend, opts := testVariant(backend)
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
	o := walls.PolicyOptions{Project: proj, Home: home}
	if mod != nil {
		mod(&o)
	}
	p, err := walls.NewPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(context.Background(), walls.NewLive(p), backend, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, proj
}

var allBackends = []string{BackendNone, BackendBwrap, BackendBwrap + perCommand, BackendLandlock, BackendLandlock + perCommand}

func TestRunBasics(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, func(o *walls.PolicyOptions) { o.OutputLimit = 4096 })
			ctx := context.Background()

			r, err := sb.Run(ctx, Cmd{Script: "pwd; read x; echo \"stdin:[$x]\"; exit 3"})
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != 3 || !strings.Contains(string(r.Output), proj) || !strings.Contains(string(r.Output), "stdin:[]") {
				t.Errorf("exit %d, output %q: want exit 3, the project as cwd and an empty stdin", r.ExitCode, r.Output)
			}

			// A megabyte of output is bounded by the output limit, and the
			// timeout ends the sleep after it. The timeout counts the walls'
			// set-up too, which took over half a second on a loaded CI
			// machine (per-command bwrap), so it leaves the output time to
			// arrive; the output is fixed so that the check does not
			// depend on how fast the machine is.
			r, err = sb.Run(ctx, Cmd{Script: "yes | head -c 1000000; exec sleep 60", Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !r.TimedOut || r.ExitCode != TimeoutExit {
				t.Errorf("yes: timed out %v, exit %d", r.TimedOut, r.ExitCode)
			}
			// Kept: 4096 bytes and the line marking the cut; the end of the
			// output, where the timeout is reported, is among them.
			if len(r.Output) > 4096+100 || r.Truncated == 0 || !strings.Contains(string(r.Output), "bytes of output dropped here") {
				t.Errorf("yes: kept %d bytes, dropped %d: want at most 4096 kept and the cut marked", len(r.Output), r.Truncated)
			}
			if !strings.HasSuffix(string(r.Output), timeoutMessage(3*time.Second)) {
				t.Errorf("yes: the timeout message at the end was not kept: ...%q", r.Output[max(0, len(r.Output)-120):])
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
	t.Parallel() // see parallelTests in main_test.go
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
	r, err := sb.Run(context.Background(), Cmd{Script: shellquote.Quote(goBin) + " build -o /tmp/hello . && /tmp/hello", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || !strings.Contains(string(r.Output), "built inside") {
		t.Errorf("go build inside the sandbox: exit %d\n%s", r.ExitCode, r.Output)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), walls.NewLive(p), "chroot"); err == nil || !strings.Contains(err.Error(), "unknown sandbox backend") {
		t.Errorf("Open(chroot) = %v", err)
	}
	if _, err := Open(context.Background(), walls.NewLive(p), BackendSeatbelt); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open(seatbelt) on Linux = %v, want ErrUnavailable", err)
	}
	name, reason := Detect()
	if name == "" || reason == "" {
		testenv.Missing(t, testenv.Bwrap, "no backend here: "+reason)
	}
	sb, err := Open(context.Background(), walls.NewLive(p), BackendAuto)
	if err != nil {
		t.Fatal(err)
	}
	if sb.Backend() != name {
		t.Errorf("auto opened %s, Detect said %s", sb.Backend(), name)
	}
	tmp := p.TempDir()
	if s, ok := sb.(*instance); ok {
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
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	leaky := &None{L: walls.NewLive(p)}
	if err := selfCheck(context.Background(), leaky); !errors.Is(err, ErrUnavailable) {
		t.Errorf("selfCheck on an unwalled backend = %v, want ErrUnavailable", err)
	}
}

// TestLauncherConcurrent: commands run through one launcher at once, each
// with its own output, exit code and timeout.
func TestLauncherConcurrent(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			sb, _ := openTest(t, backend, nil)
			var wg sync.WaitGroup
			results := make([]*Result, 5)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := Cmd{Script: fmt.Sprintf("echo start-%d; sleep 0.3; echo end-%d >&2; exit %d", i, i, i)}
					if i == 4 {
						c = Cmd{Script: "sleep 30", Timeout: 300 * time.Millisecond}
					}
					r, err := sb.Run(context.Background(), c)
					if err != nil {
						t.Error(err)
						return
					}
					results[i] = r
				}()
			}
			wg.Wait()
			for i, r := range results[:4] {
				if want := fmt.Sprintf("start-%d\nend-%d\n", i, i); r == nil || string(r.Output) != want || r.ExitCode != i {
					t.Errorf("command %d: %+v, want output %q and exit %d", i, r, want, i)
				}
			}
			if r := results[4]; r == nil || !r.TimedOut || r.ExitCode != TimeoutExit {
				t.Errorf("the timed-out command: %+v", r)
			}
		})
	}
}

// TestLauncherCommandEnds: what a command leaves running dies with it, as
// it does when a PID namespace's init exits; the working directory, the
// environment and a missing directory behave as with a sandbox per command.
func TestLauncherCommandEnds(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			sb, proj := openTest(t, backend, nil)
			ctx := context.Background()
			marker := fmt.Sprintf("harness-left-behind-%d", time.Now().UnixNano())
			r, err := sb.Run(ctx, Cmd{Script: "sh -c 'sleep 300; : " + marker + "' & setsid sh -c 'sleep 300; : " + marker + "' & echo left"})
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("%v %+v", err, r)
			}
			if n := survivors(marker, 3*time.Second); n > 0 {
				t.Errorf("%d processes outlived their command", n)
			}
			os.MkdirAll(filepath.Join(proj, "sub dir"), 0o755)
			r, _ = sb.Run(ctx, Cmd{Script: "pwd; echo \"$HARNESS_SANDBOX $TMPDIR\"", Dir: filepath.Join(proj, "sub dir")})
			if want := filepath.Join(proj, "sub dir") + "\n" + backend + " /tmp\n"; string(r.Output) != want {
				t.Errorf("output %q, want %q", r.Output, want)
			}
			r, err = sb.Run(ctx, Cmd{Script: "true", Dir: filepath.Join(proj, "missing")})
			if err != nil || r.ExitCode == 0 || !strings.Contains(string(r.Output), "missing") {
				t.Errorf("a missing directory: %v %+v", err, r)
			}
		})
	}
}

// TestLauncherRestart: a launcher that died is replaced on the next
// command, which says so; Close stops it.
func TestLauncherRestart(t *testing.T) {
	testenv.Slow(t)
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			sb, _ := openTest(t, backend, nil)
			l := sb.(*instance).launch.(*launcher)
			lp, _, err := l.get()
			if err != nil {
				t.Fatal(err)
			}
			killTree(lp.cmd.Process, l.tree)
			<-lp.done
			r, err := sb.Run(context.Background(), Cmd{Script: "echo again"})
			if err != nil || r.ExitCode != 0 || !strings.Contains(string(r.Output), "again") || !strings.Contains(string(r.Output), "started a new one") {
				t.Fatalf("after the launcher died: %v %+v", err, r)
			}
			if l.restarts != 1 {
				t.Errorf("restarts = %d, want 1", l.restarts)
			}
			lp = l.cur
			sb.Close()
			select {
			case <-lp.done:
			case <-time.After(5 * time.Second):
				t.Errorf("Close left the launcher running")
			}
			if _, err := sb.Run(context.Background(), Cmd{Script: "true"}); err == nil {
				t.Errorf("Run after Close succeeded")
			}
		})
	}
}

// TestLauncherCommandsIsolated: one command cannot signal another running
// at the same time (each has its own Landlock domain, scoped for signals).
func TestLauncherCommandsIsolated(t *testing.T) {
	testenv.Slow(t)
	if inner.LandlockABI() < 6 {
		t.Skip("Landlock below ABI 6 does not scope signals")
	}
	sb, _ := openTest(t, BackendBwrap, nil)
	marker := fmt.Sprintf("harness-victim-%d", time.Now().UnixNano())
	victim := make(chan *Result, 1)
	go func() {
		r, _ := sb.Run(context.Background(), Cmd{Script: "sh -c 'sleep 5; : " + marker + "'; echo survived"})
		victim <- r
	}()
	// Wait until the victim runs, then try to kill it from a second command.
	deadline := time.Now().Add(5 * time.Second)
	for survivors(marker, 0) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The marker is split so that the attacker's own command line lacks it.
	half := len(marker) / 2
	r, err := sb.Run(context.Background(), Cmd{Script: `m=` + marker[:half] + `; m="${m}` + marker[half:] + `"; n=0; for d in /proc/[0-9]*; do if grep -q "$m" $d/cmdline 2>/dev/null; then n=$((n+1)); kill -9 ${d#/proc/} && echo KILLED; fi; done; echo "found $n"`})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.Output), "found 0") || !strings.Contains(string(r.Output), "found ") || strings.Contains(string(r.Output), "KILLED") {
		t.Errorf("attacker (exit %d): %q; want it to find the victim and fail to kill it", r.ExitCode, r.Output)
	}
	if v := <-victim; v == nil || !strings.Contains(string(v.Output), "survived") {
		t.Errorf("victim: %+v", v)
	}
}

// TestLauncherFallback: a launcher that cannot start leaves every command
// to a sandbox of its own, and the first one says so.
func TestLauncherFallback(t *testing.T) {
	sb, _ := openTest(t, BackendBwrap, nil)
	l := sb.(*instance).launch.(*launcher)
	l.Close()
	l.mu.Lock()
	l.closed = false
	l.newCmd = func(*walls.Policy) *exec.Cmd { return exec.Command("/bin/false") }
	l.mu.Unlock()
	for i, wantNote := range []bool{true, false} {
		r, err := sb.Run(context.Background(), Cmd{Script: "echo walled; grep NoNewPrivs /proc/self/status"})
		if err != nil || r.ExitCode != 0 || !strings.Contains(string(r.Output), "walled") || !strings.Contains(string(r.Output), "NoNewPrivs:\t1") {
			t.Fatalf("command %d: %v %+v", i, err, r)
		}
		if note := strings.Contains(string(r.Output), "sandbox of its own"); note != wantNote {
			t.Errorf("command %d: note %v, want %v: %q", i, note, wantNote, r.Output)
		}
	}
}

// TestLauncherEnvOff: HARNESS_SANDBOX_LAUNCHER=0 in the environment the
// caller passes turns the launcher off; the process's own environment is
// not read.
func TestLauncherEnvOff(t *testing.T) {
	testenv.Slow(t)
	requireBackend(t, BackendBwrap)
	t.Setenv(LauncherEnv, "0")
	p, err := walls.NewPolicy(walls.PolicyOptions{Project: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	off := func(string) string { return "0" }
	for _, tc := range []struct {
		opts []Option
		want bool
	}{
		{nil, true}, // the process's variable is not the sandbox's input
		{[]Option{LauncherFromEnv(off)}, false},
		{[]Option{LauncherFromEnv(off), WithLauncher(true)}, true},
		{[]Option{WithEnv(off)}, false},
	} {
		sb, err := Open(context.Background(), walls.NewLive(p), BackendBwrap, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := sb.(*instance).launch != nil; got != tc.want {
			t.Errorf("%s=0 with %d options: launcher %v, want %v", LauncherEnv, len(tc.opts), got, tc.want)
		}
		sb.Close()
	}
}

// TestInnerStageFailureExits125: when the inner stage cannot put up its
// walls (here the project, a writable root, vanished after Open), nothing
// runs and the status is 125, as harness sandbox's EXIT STATUS says.
func TestInnerStageFailureExits125(t *testing.T) {
	sb, proj := openTest(t, BackendLandlock+perCommand, nil)
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(filepath.Dir(proj), "ran")
	r, err := sb.Run(context.Background(), Cmd{Script: "touch " + shellquote.Quote(marker), Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != inner.HelperFailed {
		t.Errorf("exit %d, want %d: %s", r.ExitCode, inner.HelperFailed, r.Output)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran without its walls")
	}
}
