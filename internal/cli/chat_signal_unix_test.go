//go:build unix

package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestChatTerminated: SIGTERM (and SIGHUP, a closed terminal) end an
// interactive session waiting at its prompt cleanly, with the exit status
// EXIT STATUS gives for it, 130, not 0: the session is closed (no sandbox
// temporary directory or spill directory is left) and a script that ran
// harness learns it did not end by itself.
func TestChatTerminated(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newCrashEnv(t, "anthropic")
			tmp := t.TempDir()
			cache := filepath.Join(e.home, ".cache")
			for _, kv := range e.env {
				if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
					cache = v
				}
			}
			cmd := exec.Command(harnessBinary(t), "--project", e.proj)
			cmd.Env = append(e.env, "TMPDIR="+tmp)
			cmd.Dir = e.proj
			// A prompt that never comes: the pipe stays open until the end.
			in, feed, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer feed.Close()
			cmd.Stdin = in
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			in.Close()
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			sc := bufio.NewScanner(out)
			for sc.Scan() && !strings.Contains(sc.Text(), "/help for commands") {
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("harness ended with %v after %v, want exit status %d", err, sig, exitInterrupted)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "harness-*")); len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "harness", "spill", "*")); len(left) > 0 {
				t.Errorf("spill directories left: %v", left)
			}
		})
	}
}
