//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestRunInterrupted sends a real SIGINT (to the process group, as a
// terminal's Ctrl-C does) or SIGTERM (to the process, as kill does) to a
// real harness run while its bash tool sleeps. The run must notice it: the
// sleep would otherwise last five minutes. It exits 130, writes the result
// object with is_error and reason "interrupted", records the interrupted
// call, and closes the session: no sandbox temporary directory, spill
// directory or sandboxed process is left behind.
func TestRunInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		group bool
	}{{"SIGINT", syscall.SIGINT, true}, {"SIGTERM", syscall.SIGTERM, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCrashEnv(t, "anthropic")
			tmp := t.TempDir()
			e.env = append(e.env, "TMPDIR="+tmp)
			cache := ""
			for _, kv := range e.env {
				if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
					cache = v
				}
			}
			// A duration of its own marks this test's sleep among all processes.
			marker := fmt.Sprintf("sleep 300.%06d", time.Now().UnixNano()%1e6)
			e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_sleep", Name: "bash", Input: `{"command":"` + marker + `"}`}}, Usage: llm.Usage{Input: 11, Output: 3}})
			cmd, lines := e.start(t, "run", "--project", e.proj, "--allow", "bash sleep *", "--output-format", "stream-json", "run the slow job")
			for line := range lines {
				if strings.Contains(line, `"type":"tool_use"`) {
					break
				}
			}
			waitFor(t, "the sandboxed sleep to start", func() bool { return countProcs(marker) > 0 })
			pid := cmd.Process.Pid
			if tc.group {
				pid = -pid
			}
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for line := range lines {
				rest = append(rest, line)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("harness ended with %v, want exit status %d", err, exitInterrupted)
			}
			if len(rest) == 0 {
				t.Fatal("no output after the signal: want the tool result and the result object")
			}
			var res runResult
			if err := json.Unmarshal([]byte(rest[len(rest)-1]), &res); err != nil {
				t.Fatalf("last line %q: %v", rest[len(rest)-1], err)
			}
			if res.Type != "result" || !res.IsError || res.Reason != reasonInterrupted || res.SessionID == "" || !strings.Contains(res.Error, "--resume "+res.SessionID) {
				t.Fatalf("result %+v, want is_error, reason %q and how to resume", res, reasonInterrupted)
			}
			if !strings.Contains(strings.Join(rest, "\n"), "interrupted") {
				t.Errorf("the tool result does not say the turn was interrupted: %q", rest)
			}
			msgs := mainMessages(readLog(t, e.logPath(t)))
			if last := msgs[len(msgs)-1]; len(last.Blocks) != 1 || last.Blocks[0].ToolUseID != "call_sleep" || !strings.Contains(last.Blocks[0].Content, "interrupted") {
				t.Errorf("the log's last message %+v, want the interrupted call's result", last)
			}
			if n := survivors(marker, 5*time.Second); n > 0 {
				t.Errorf("%d sandboxed processes outlived the interrupted run", n)
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

// countProcs counts live processes whose command line contains marker.
func countProcs(marker string) int {
	n := 0
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			n++
		}
	}
	return n
}

// survivors waits up to d for the processes carrying marker to end and
// returns how many are left.
func survivors(marker string, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := countProcs(marker)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

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
