package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
)

// npmDirEnv names the directory the reference servers were installed in
// with npm install --prefix (.ci/run does it); the default is
// ~/.cache/harness-test/mcp-npm.
const npmDirEnv = "HARNESS_MCP_NPM"

// npmServer is the installed bin of a reference server, or skips (fails
// under HARNESS_REQUIRE=mcp-npm) saying how to install it.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	dir := os.Getenv(npmDirEnv)
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "harness-test", "mcp-npm")
	}
	install := "npm install --prefix " + dir + " @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything @modelcontextprotocol/server-memory"
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, testenv.MCPNpm, "node is not installed (apt-get install nodejs npm), then "+install)
	}
	p := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, testenv.MCPNpm, bin+" is not installed in "+dir+" ("+npmDirEnv+"): run "+install)
	}
	return p
}

// TestFilesystemServerWalls: the reference filesystem server, told it may
// use /, runs inside the bwrap walls: it writes in the project, but not
// outside it or in the home directory, and cannot read ~/.ssh; all
// asserted on the host. When the session ends, no process of its remains.
func TestFilesystemServerWalls(t *testing.T) {
	needBwrap(t)
	bin := npmServer(t, "mcp-server-filesystem")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	// The project as a second allowed directory marks its command line
	// (the sandbox's own launcher, which runs until the sandbox closes, has
	// the project in its command line too, but not the server's path).
	m := start(t, sb, Options{}, Server{Name: "fs", Command: bin, Args: []string{"/", f.proj}, Scope: ScopeProject})
	ts := m.Tools(false)
	names := map[string]bool{}
	for _, tl := range ts {
		names[tl.Spec().Name] = true
	}
	read := "mcp__fs__read_text_file"
	if !names[read] {
		read = "mcp__fs__read_file"
	}
	if !names["mcp__fs__write_file"] || !names[read] {
		t.Fatalf("filesystem tools: %v", names)
	}

	inside := filepath.Join(f.proj, "inside.txt")
	res := run(t, ts, "mcp__fs__write_file", `{"path":"`+inside+`","content":"written by mcp"}`)
	if got, err := os.ReadFile(inside); err != nil || string(got) != "written by mcp" {
		t.Errorf("a write inside the project: %+v; on the host: %q %v", res, got, err)
	}
	for _, p := range []string{filepath.Join(f.base, "outside.txt"), filepath.Join(f.home, "planted.txt"), filepath.Join(f.home, ".bashrc")} {
		res := run(t, ts, "mcp__fs__write_file", `{"path":"`+p+`","content":"escaped"}`)
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the server wrote %s outside the project (result %q)", p, res.Content)
		}
		if !res.IsError {
			t.Errorf("write to %s: no error reached the model: %q", p, res.Content)
		}
	}
	secret := run(t, ts, read, `{"path":"`+filepath.Join(f.home, ".ssh", "id_ed25519")+`"}`)
	if strings.Contains(secret.Content, "SECRET-KEY-MATERIAL") {
		t.Errorf("the server read ~/.ssh: %q", secret.Content)
	}
	if len(procsMatching(bin, f.proj)) == 0 {
		t.Fatalf("no process of the server found on the host while it runs (the check below would prove nothing)")
	}
	m.Close()
	if left := procsMatching(bin, f.proj); len(left) > 0 {
		t.Errorf("processes outlived the session: %q", left)
	}
}

// TestNoServerProcessOutlives: a server that started a process in a
// session of its own (as a daemon would) leaves nothing behind when the
// session ends.
func TestNoServerProcessOutlives(t *testing.T) {
	needBwrap(t)
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	m := start(t, sb, Options{}, f.goServer("go", "full"))
	marker := "harness-orphan-" + filepath.Base(f.base)
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__go__spawn","arguments":{"text":"`+marker+`"}}`); res.IsError {
		t.Fatalf("spawn: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(procsMatching(marker)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(procsMatching(marker)) == 0 || len(procsMatching(f.bin)) == 0 {
		t.Fatalf("the server (%s) or its daemon (%s) is not running on the host", f.bin, marker)
	}
	m.Close()
	if left := append(procsMatching(marker), procsMatching(f.bin)...); len(left) > 0 {
		t.Errorf("processes outlived the session: %q", left)
	}
}

// TestReferenceServers: the reference everything and memory servers from
// npm, inside the walls: tools listed and called, results as text.
func TestReferenceServers(t *testing.T) {
	needBwrap(t)
	everything := npmServer(t, "mcp-server-everything")
	memory := npmServer(t, "mcp-server-memory")
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	m := start(t, sb, Options{},
		Server{Name: "everything", Command: everything, Args: []string{"stdio"}, Scope: ScopeUser},
		Server{Name: "memory", Command: memory, Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(f.proj, "memory.jsonl")}, Scope: ScopeUser})
	ts := m.Tools(true)
	if res := run(t, ts, "mcp_search", `{"query":"echo"}`); !strings.Contains(res.Content, "mcp__everything__echo") {
		t.Errorf("search echo: %s", res.Content)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__everything__echo","arguments":{"message":"hi from harness"}}`); res.IsError || !strings.Contains(res.Content, "hi from harness") {
		t.Errorf("everything echo: %+v", res)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__memory__create_entities","arguments":{"entities":[{"name":"harness","entityType":"project","observations":["written in Go"]}]}}`); res.IsError {
		t.Errorf("memory create_entities: %+v", res)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__memory__read_graph","arguments":{}}`); !strings.Contains(res.Content, "written in Go") {
		t.Errorf("memory read_graph: %+v", res)
	}
	if raw, err := os.ReadFile(filepath.Join(f.proj, "memory.jsonl")); err != nil || !strings.Contains(string(raw), "written in Go") {
		t.Errorf("the memory file in the project, on the host: %q %v", raw, err)
	}
	_ = context.Background
}
