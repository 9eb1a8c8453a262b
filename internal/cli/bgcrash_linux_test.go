package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/testenv"
)

// devServerBinary copies this test binary where the walls let a command
// run it (the host's /tmp is replaced inside), for the dev server role.
func devServerBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "harness-devserver-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "devserver")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// procsWith lists the host's processes whose command line holds every
// one of parts.
func procsWith(parts ...string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(string(raw), p)
		}
		if all {
			out = append(out, e.Name()+": "+strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " ")))
		}
	}
	return out
}

// TestSIGKILLTakesBackgroundJobsDown runs the real harness binary, whose
// model starts a dev server in the background (with a child process of its
// own, a sleep), has a later command reach it, and then hangs; harness is
// killed with SIGKILL, so no cleanup of its runs. The server and its child
// must be gone on the host all the same, for each Linux backend, with and
// without the launcher. What takes them down is the kernel, not harness:
// harness starts the sandbox's outer process (bwrap, or the landlock
// helper) with PR_SET_PDEATHSIG = SIGKILL; bwrap's --die-with-parent (or
// the helper itself being it) makes the init of the sandbox's PID
// namespace die with it, and the end of a PID namespace's init kills
// every process in it, setsid or not.
func TestSIGKILLTakesBackgroundJobsDown(t *testing.T) {
	bin := devServerBinary(t)
	name, why := detectedBackend()
	backends := []struct {
		backend string
		ok      bool
		why     string
		feature string
	}{
		{sandbox.BackendBwrap, name == sandbox.BackendBwrap, why, testenv.Bwrap},
		{sandbox.BackendLandlock, inner.LandlockABI() > 0, "this kernel has no Landlock", testenv.Landlock},
		{sandbox.BackendNone, true, "", ""}, // no walls: every command asks, --yolo answers
	}
	for _, b := range backends {
		for _, launcher := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/launcher=%v", b.backend, launcher), func(t *testing.T) {
				if !b.ok {
					testenv.Missing(t, b.feature, b.why)
				}
				e := newCrashEnv(t, "anthropic")
				if !launcher {
					e.env = append(e.env, sandbox.LauncherEnv+"=0")
				}
				marker := fmt.Sprintf("devserver-%d", rand.IntN(1e9))
				sleep := fmt.Sprintf("3%d.5", rand.IntN(1e6))
				port := 20000 + rand.IntN(5000)
				script := fmt.Sprintf("sleep %s & %s=1 exec %s %s %d", sleep, devServerRole, bin, marker, port)
				// A later command reaches the server where commands share the
				// launcher's network namespace and its loopback: bwrap, and
				// landlock where user namespaces give it one. Without the
				// launcher each command has a namespace of its own.
				reach := launcher && (b.backend == sandbox.BackendBwrap || b.backend == sandbox.BackendLandlock && exec.Command("unshare", "--user", "--net", "true").Run() == nil)
				later := "echo the server is not reachable from here"
				if reach {
					later = fmt.Sprintf("%s=get %s http://127.0.0.1:%d/ready", devServerRole, bin, port)
				}
				e.srv.Enqueue(
					llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_bg", Name: "bash", Input: jsonString(t, map[string]any{"command": script, "background": true})}}},
					llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_curl", Name: "bash", Input: jsonString(t, map[string]any{
						"command": later})}}},
					// The page as web_fetch shows it: fetched inside the walls.
					llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_fetch", Name: "web_fetch", Input: jsonString(t, map[string]any{
						"url": fmt.Sprintf("http://localhost:%d/app", port)})}}},
					llmtest.Reply{Text: "never finished", Delay: time.Hour},
				)
				cmd, lines := e.start(t, "run", "--project", e.proj, "--sandbox", b.backend, "--yolo", "--output-format", "stream-json", "start the dev server")
				go func() {
					for range lines {
					}
				}()
				waitFor(t, "the fourth request", func() bool { return len(e.srv.Requests()) >= 4 })
				reqs := e.srv.Requests()
				started := reqs[1].Messages[len(reqs[1].Messages)-1].Blocks[0].Content
				if !strings.Contains(started, "started in the background as job-1") {
					t.Fatalf("the model was not told of the job: %s", started)
				}
				// none holds no PID namespace: the shell dies with harness
				// (PR_SET_PDEATHSIG), a child that it started may not, and
				// the model is told so.
				dies := b.backend != sandbox.BackendNone
				if warned := strings.Contains(started, "may outlive harness if harness is killed; an orderly end of the session kills it"); warned == dies {
					t.Errorf("warned %v of a %s job: %s", warned, b.backend, started)
				}
				msgs := reqs[2].Messages
				got := msgs[len(msgs)-1].Blocks[0].Content
				if reach && !strings.Contains(got, "hello from the dev server") {
					t.Fatalf("a later command did not reach the background server: %s", got)
				}
				msgs = reqs[3].Messages
				got = msgs[len(msgs)-1].Blocks[0].Content
				if reach && (!strings.Contains(got, fmt.Sprintf("URL: http://localhost:%d/app\nStatus: 200 OK", port)) || !strings.Contains(got, "# hello from the dev server")) {
					t.Fatalf("web_fetch did not show the background server's page: %s", got)
				}
				server, child := procsWith(bin+"\x00"+marker), procsWith("sleep\x00"+sleep)
				if len(server) != 1 || len(child) != 1 {
					t.Fatalf("want the server and its child running on the host, got %v and %v", server, child)
				}
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				_ = cmd.Wait()
				killed := time.Now()
				deadline := killed.Add(10 * time.Second)
				for {
					left := procsWith(bin + "\x00" + marker)
					if dies {
						left = append(left, procsWith("sleep\x00"+sleep)...)
					}
					if len(left) == 0 {
						break
					}
					if time.Now().After(deadline) {
						// Do not leave them to the next test.
						for _, p := range left {
							var pid int
							fmt.Sscanf(p, "%d:", &pid)
							syscall.Kill(pid, syscall.SIGKILL)
						}
						t.Fatalf("10 s after harness was killed, still running on the host: %v", left)
					}
					time.Sleep(20 * time.Millisecond)
				}
				t.Logf("gone %s after SIGKILL", time.Since(killed).Round(time.Millisecond))
				if !dies {
					for _, p := range procsWith("sleep\x00" + sleep) {
						var pid int
						fmt.Sscanf(p, "%d:", &pid)
						syscall.Kill(pid, syscall.SIGKILL)
						t.Logf("as the model was told, the %s job's child outlived harness: %s", b.backend, p)
					}
				}
			})
		}
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
