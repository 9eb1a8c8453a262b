package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// TestMain lets the test binary serve as the sandbox's inner stage.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	os.Exit(m.Run())
}

// handEditNobodyEnv marks the re-run as nobody.
const handEditNobodyEnv = "HARNESS_CHECKPOINT_TEST_HANDEDIT_NOBODY"

// TestHandEditDuringCommand (#45), with the real sandbox: a person edits
// u.txt on the host while the agent's command writes c.txt. Undo of the
// call takes c.txt back and leaves the edit alone, and a note names it.
// On the code before, the edit was journaled as the command's and undo
// reverted it. Both launcher backends, as root and as nobody.
func TestHandEditDuringCommand(t *testing.T) {
	testenv.Slow(t)
	for _, name := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(name, func(t *testing.T) {
			if name == sandbox.BackendLandlock && inner.LandlockABI() == 0 {
				testenv.Missing(t, testenv.Landlock, "this kernel has no Landlock")
			}
			base, err := os.MkdirTemp(backend.OutsideBase(), "harness-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			proj := filepath.Join(base, "proj")
			os.Mkdir(proj, 0o755)
			os.Mkdir(filepath.Join(base, "home"), 0o755)
			u, c := filepath.Join(proj, "u.txt"), filepath.Join(proj, "c.txt")
			write(t, u, "the user's\n")
			p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: filepath.Join(base, "home")})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := sandbox.Open(context.Background(), walls.NewLive(p), name, sandbox.WithEnv(func(string) string { return "" }), sandbox.WithLauncher(true))
			if err != nil {
				if name == sandbox.BackendBwrap {
					testenv.Missing(t, testenv.Bwrap, err.Error())
				}
				t.Fatal(err)
			}
			defer sb.Close()
			s := openStore(t, proj)
			var notes []string
			s.Notify = func(n string) { notes = append(notes, n) }

			_, end := s.BeginCommand("c1", "bash")
			done := make(chan *sandbox.Result, 1)
			go func() {
				r, err := sb.Run(context.Background(), sandbox.Cmd{Script: "echo C > c.txt; while [ ! -e ready ]; do sleep 0.05; done"})
				if err != nil {
					t.Error(err)
				}
				done <- r
			}()
			for deadline := time.Now().Add(20 * time.Second); !exists(c); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the command did not write c.txt")
				}
			}
			write(t, u, "the user's edit\n") // by hand, on the host
			write(t, filepath.Join(proj, "ready"), "")
			r := <-done
			if r == nil {
				t.FailNow()
			}
			end(r.Wrote, r.WroteKnown, r.WroteWhy)

			if !r.WroteKnown || !slices.Equal(r.Wrote, []string{c}) {
				t.Errorf("the sandbox saw: known %v (%s) %v, want %v", r.WroteKnown, r.WroteWhy, r.Wrote, []string{c})
			}
			res, err := s.Undo(Selection{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if exists(c) {
				t.Errorf("undo left the command's c.txt: %+v", res)
			}
			if b, _ := os.ReadFile(u); string(b) != "the user's edit\n" {
				t.Errorf("undo set the user's edit back to %q: %+v", b, res)
			}
			if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "someone else") && strings.Contains(n, "u.txt") }) {
				t.Errorf("the user's edit was not named: %q", notes)
			}
		})
	}
	if os.Getuid() != 0 || os.Getenv(handEditNobodyEnv) != "" || t.Failed() {
		return
	}
	setpriv, bin := testenv.NobodyBinary(t, backend.OutsideBase(), "TestHandEditDuringCommand")
	home := filepath.Join(filepath.Dir(bin), "home")
	os.Mkdir(home, 0o700)
	os.Chown(home, 65534, 65534)
	cmd := testenv.AsNobody(setpriv, bin, []string{"-test.run=^TestHandEditDuringCommand$", "-test.count=1", "-test.v"},
		handEditNobodyEnv+"=1", "HOME="+home, "TMPDIR=/tmp")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS: TestHandEditDuringCommand/") != 2 {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}
