package app

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// copyExe copies the test binary to dir (outside /tmp, which the walls
// replace), for the MCP server the session starts inside them.
func copyExe(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	bin := filepath.Join(dir, "mcp-server")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

func sizeOf(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

func waitGrowing(t *testing.T, path string) {
	t.Helper()
	first := sizeOf(path)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n := sizeOf(path); n > 0 && n > first {
			return
		}
	}
	t.Fatalf("%s never grew", path)
}

// TestPlanModeReachesWhatRuns is the red team's check on a whole session
// with real bwrap: before the switch to plan mode, an MCP server (stdio,
// inside the walls) writes a project file on its own, a background
// command and a foreground command in flight write project files in a
// loop. After s.Modes.Set(plan), on the host: no file grows over a
// measured second; the server's tool without readOnlyHint is refused and
// its file never appears; its tool that claims to be read-only but writes
// fails in the kernel; its read-only tool still answers; the model's next
// prompt says what was stopped. Leaving plan mode lets the server write
// again. Run as root and, through TestPlanModeReachesWhatRunsUnprivileged,
// as nobody.
func TestPlanModeReachesWhatRuns(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+why)
	}
	base, err := os.MkdirTemp("/var/tmp", "harness-app-mode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	o := testOptions(t)
	o.WorkDir = proj
	o.Backend = sandbox.BackendBwrap
	o.Yolo = true // the loops' writes ask; plan mode's refusals are denials, which --yolo never lifts
	cfg := filepath.Join(base, "mcp.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"srv": map[string]any{"command": copyExe(t, base), "env": map[string]string{mcptest.KindEnv: "full"}},
	}})
	os.WriteFile(cfg, raw, 0o644)
	o.MCPConfigs = []string{cfg}
	o.Source.Env["MCP_TOOLS"] = "lazy"
	ctx := context.Background()
	s, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	call := func(name string, input any) llm.Block {
		n++
		in, _ := json.Marshal(input)
		return s.Registry.Run(ctx, llm.Block{Type: llm.BlockToolUse, ID: "call" + string(rune('a'+n)), Name: name, Input: in})
	}
	mcpCall := func(tool string, args any) llm.Block {
		return call("mcp_call", map[string]any{"name": "mcp__srv__" + tool, "arguments": args})
	}
	file := func(name string) string { return filepath.Join(proj, name) }

	if r := mcpCall("tick", map[string]string{"path": file("tick.txt")}); r.IsError {
		t.Fatalf("tick: %s", r.Content)
	}
	if r := call("bash", map[string]any{"command": "while :; do echo x >> bg.txt; sleep 0.01; done", "background": true}); r.IsError || !strings.Contains(r.Content, "job-1") {
		t.Fatalf("background: %s", r.Content)
	}
	fgDone := make(chan llm.Block, 1)
	go func() {
		fgDone <- call("bash", map[string]any{"command": "while :; do echo x >> fg.txt; sleep 0.01; done", "timeout": 120})
	}()
	for _, f := range []string{"tick.txt", "bg.txt", "fg.txt"} {
		waitGrowing(t, file(f))
	}

	start := time.Now()
	s.Modes.Set(extend.ModePlan)
	t.Logf("the switch to plan mode returned in %s", time.Since(start).Round(time.Millisecond))
	before := map[string]int64{}
	for _, f := range []string{"tick.txt", "bg.txt", "fg.txt"} {
		before[f] = sizeOf(file(f))
	}
	time.Sleep(time.Second)
	for f, b := range before {
		if a := sizeOf(file(f)); a != b {
			t.Errorf("%s is still written after the switch to plan mode: %d bytes, then %d a second later", f, b, a)
		}
	}
	select {
	case r := <-fgDone:
		if !strings.Contains(r.Content, "plan mode") {
			t.Errorf("the foreground result does not say why it stopped:\n%s", r.Content)
		}
	case <-time.After(10 * time.Second):
		t.Error("the foreground command did not return after the switch")
	}
	if r := mcpCall("put", map[string]string{"path": file("put.txt")}); !r.IsError || !strings.Contains(r.Content, "plan mode") {
		t.Errorf("an MCP tool without readOnlyHint in plan mode: %s", r.Content)
	}
	if sizeOf(file("put.txt")) != -1 {
		t.Error("an MCP tool without readOnlyHint wrote the project in plan mode")
	}
	if r := mcpCall("write", map[string]string{"path": file("lie.txt")}); sizeOf(file("lie.txt")) != -1 {
		t.Errorf("an MCP tool claiming read-only wrote the project in plan mode: %s", r.Content)
	}
	if r := mcpCall("echo", map[string]string{"text": "plan"}); r.Content != "echo: plan" {
		t.Errorf("a read-only MCP tool in plan mode: %s", r.Content)
	}
	note := s.Modes.TurnContext()
	for _, want := range []string{"job-1", "MCP servers srv", "read-only walls", extend.PlanNote[:30]} {
		if !strings.Contains(note, want) {
			t.Errorf("the next prompt does not say %q:\n%s", want, note)
		}
	}

	s.Modes.Set(extend.ModeDefault)
	if r := mcpCall("put", map[string]string{"path": file("put.txt")}); r.IsError || sizeOf(file("put.txt")) != 3 {
		t.Errorf("after plan mode, the MCP server cannot write: %s", r.Content)
	}
	if note := s.Modes.TurnContext(); !strings.Contains(note, "stay stopped") {
		t.Errorf("leaving plan mode does not say the job stays stopped:\n%s", note)
	}
}

// TestPlanModeReachesWhatRunsUnprivileged runs the check above as nobody.
func TestPlanModeReachesWhatRunsUnprivileged(t *testing.T) {
	testenv.Slow(t)
	if os.Getuid() != 0 {
		testenv.Missing(t, testenv.Root, "already unprivileged: TestPlanModeReachesWhatRuns covers this uid")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.Missing(t, testenv.Setpriv, "setpriv (util-linux) is not installed")
	}
	dir, err := os.MkdirTemp("/var/tmp", "harness-app-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := copyExe(t, dir)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "-test.run=^TestPlanModeReachesWhatRuns$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "HOME=/nonexistent", "TMPDIR=/var/tmp")
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPlanModeReachesWhatRuns") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

// TestStartInPlanMode: with --permission-mode plan, the MCP servers start
// under the read-only walls (they start before the mode is set): a tool
// that claims to be read-only and writes by itself creates nothing on the
// host, and the background commands start read-only too.
func TestStartInPlanMode(t *testing.T) {
	testenv.Slow(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed")
	}
	if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+why)
	}
	base, err := os.MkdirTemp("/var/tmp", "harness-app-mode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	proj := filepath.Join(base, "proj")
	os.MkdirAll(proj, 0o755)
	o := testOptions(t)
	o.WorkDir, o.Backend, o.Yolo, o.PermissionMode = proj, sandbox.BackendBwrap, true, "plan"
	cfg := filepath.Join(base, "mcp.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"srv": map[string]any{"command": copyExe(t, base), "env": map[string]string{mcptest.KindEnv: "full"}},
	}})
	os.WriteFile(cfg, raw, 0o644)
	o.MCPConfigs = []string{cfg}
	ctx := context.Background()
	s, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tick := filepath.Join(proj, "tick.txt")
	in, _ := json.Marshal(map[string]any{"name": "mcp__srv__tick", "arguments": map[string]string{"path": tick}})
	r := s.Registry.Run(ctx, llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: "mcp_call", Input: in})
	in, _ = json.Marshal(map[string]any{"command": "while :; do echo x >> bg.txt; sleep 0.01; done", "background": true})
	s.Registry.Run(ctx, llm.Block{Type: llm.BlockToolUse, ID: "t2", Name: "bash", Input: in})
	time.Sleep(time.Second)
	for _, f := range []string{tick, filepath.Join(proj, "bg.txt")} {
		if n := sizeOf(f); n != -1 {
			t.Errorf("started in plan mode, %s was written (%d bytes; tick said %q)", f, n, r.Content)
		}
	}
}
