package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// needBwrap skips (or fails under HARNESS_REQUIRE=bwrap) without bwrap.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		testenv.Missing(t, testenv.Bwrap, "bwrap is not installed (apt-get install bubblewrap)")
	}
	if name, why := sandbox.Detect(); name != sandbox.BackendBwrap {
		testenv.Missing(t, testenv.Bwrap, "bwrap cannot build a sandbox here: "+why)
	}
}

var allowAll = tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" })

// run calls the tool name with input through a registry of ts, as the agent
// does, and returns the result block.
func run(t *testing.T, ts []tools.Tool, name, input string) llm.Block {
	t.Helper()
	r := tools.NewRegistry(allowAll, ts...)
	return r.Run(context.Background(), llm.Block{Type: llm.BlockToolUse, ID: "call1", Name: name, Input: json.RawMessage(input)})
}

// TestGoServerStdio: the Go server runs inside each backend's walls; its
// tools are listed, called lazily (mcp_search, mcp_call) and eagerly
// (mcp__go__echo), and its environment is the sandbox's clean one plus
// what its configuration names: nothing else of the host's.
func TestGoServerStdio(t *testing.T) {
	for _, backend := range []string{sandbox.BackendNone, sandbox.BackendBwrap} {
		t.Run(backend, func(t *testing.T) {
			if backend == sandbox.BackendBwrap {
				needBwrap(t)
			}
			f := newFixture(t)
			sb := f.open(t, backend)
			def := f.goServer("go", "full")
			def.Env["GREETING"] = "hello from the config"
			m := start(t, sb, Options{}, def)

			lazy := m.Tools(true)
			if len(lazy) != 3 || lazy[0].Spec().Name != "mcp_search" || lazy[1].Spec().Name != "mcp_call" || lazy[2].Spec().Name != ResourceToolName {
				t.Fatalf("lazy tools: %v", lazy)
			}
			found := run(t, lazy, "mcp_search", `{"query":"echo"}`)
			if !strings.Contains(found.Content, "mcp__go__echo") || !strings.Contains(found.Content, `"text"`) {
				t.Errorf("mcp_search echo:\n%s", found.Content)
			}
			res := run(t, lazy, "mcp_call", `{"name":"mcp__go__echo","arguments":{"text":"hi"}}`)
			if res.IsError || res.Content != "echo: hi" {
				t.Errorf("mcp_call echo: %+v", res)
			}
			eager := m.Tools(false)
			if res := run(t, eager, "mcp__go__echo", `{"text":"eager"}`); res.Content != "echo: eager" {
				t.Errorf("eager echo: %+v", res)
			}
			env := run(t, lazy, "mcp_call", `{"name":"mcp__go__env"}`).Content
			if !strings.Contains(env, "GREETING=hello from the config") || !strings.Contains(env, serverEnv+"=full") {
				t.Errorf("the configured environment did not arrive:\n%s", env)
			}
			if strings.Contains(env, "SECRET_TOKEN") {
				t.Errorf("the host's SECRET_TOKEN reached the server:\n%s", env)
			}
		})
	}
}

// TestServerFailures: a crash, a hang and malformed output each give the
// model a clear error, the call returns, and other servers go on.
func TestServerFailures(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	var notes []string
	m := start(t, sb, Options{CallTimeout: 2 * time.Second, Notify: func(s string) { notes = append(notes, s) }},
		f.goServer("a", "full"), f.goServer("b", "full"), f.goServer("c", "full"))
	ts := m.Tools(true)

	hang := run(t, ts, "mcp_call", `{"name":"mcp__a__hang"}`)
	if !hang.IsError || !strings.Contains(hang.Content, "did not answer") || !strings.Contains(hang.Content, "MCP_TOOL_TIMEOUT") {
		t.Errorf("hang: %+v", hang)
	}
	// The server was told (notifications/cancelled): its handler saw it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.proj, "cancelled.txt")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(f.proj, "cancelled.txt")); err != nil {
		t.Errorf("the server was not told the call was cancelled: %v", err)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__a__echo","arguments":{"text":"still"}}`); res.Content != "echo: still" {
		t.Errorf("a after its hang was cancelled: %+v", res)
	}

	crash := run(t, ts, "mcp_call", `{"name":"mcp__b__crash"}`)
	if !crash.IsError || !strings.Contains(crash.Content, "stopped") || !strings.Contains(crash.Content, "code 3") {
		t.Errorf("crash: %+v", crash)
	}
	after := run(t, ts, "mcp_call", `{"name":"mcp__b__echo","arguments":{"text":"x"}}`)
	if !after.IsError || !strings.Contains(after.Content, "stopped") {
		t.Errorf("a call to the crashed server: %+v", after)
	}

	bad := run(t, ts, "mcp_call", `{"name":"mcp__c__garbage"}`)
	if !bad.IsError || !strings.Contains(bad.Content, "MCP server c stopped: it wrote a malformed message") {
		t.Errorf("garbage: an error that does not name the server: %+v", bad)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__a__echo","arguments":{"text":"on"}}`); res.Content != "echo: on" {
		t.Errorf("a after the others failed: %+v", res)
	}
	if len(notes) == 0 || !strings.Contains(strings.Join(notes, "\n"), "MCP server b stopped") {
		t.Errorf("the user was not told b stopped: %q", notes)
	}
}

// TestStartFailures: a server that never answers the handshake, one whose
// command does not exist and one that is not an MCP server each give a
// start error that names the server and says why; the others start.
func TestStartFailures(t *testing.T) {
	testenv.Slow(t)
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendNone)
	marker := "harness-silent-" + filepath.Base(f.base)
	m, errs := Start(context.Background(), []Server{
		{Name: "silent", Command: "sh", Args: []string{"-c", "sleep 100; echo " + marker}},
		{Name: "missing", Command: "/nonexistent/mcp-server"},
		{Name: "chatty", Command: "sh", Args: []string{"-c", "echo hello; echo oops >&2; exit 2"}},
		// The handshake answered with a line of 20 MiB, over the 16 MiB
		// bound (doors has the 256 MiB probe; 64 MiB took over the 5 s
		// start timeout at a load of 30).
		{Name: "huge", Command: "sh", Args: []string{"-c", `read -r _; printf '{"jsonrpc":"2.0","id":1,"result":{"x":"'; head -c 20971520 /dev/zero | tr '\0' a; printf '"}}\n'; sleep 5`}},
		f.goServer("good", "full"),
	}, Options{Sandbox: sb, StartTimeout: 5 * time.Second})
	defer m.Close()
	all := ""
	for _, e := range errs {
		all += e.Error() + "\n"
	}
	for _, want := range []string{
		"MCP server silent: did not answer within 5s (MCP_TIMEOUT raises it)",
		"MCP server huge: it sent a message over 16 MiB, the limit for one MCP message",
		"MCP server missing:", "not found",
		"MCP server chatty:", "exited with code 2", "oops",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("start errors lack %q:\n%s", want, all)
		}
	}
	if len(errs) != 4 {
		t.Errorf("%d start errors, want 4:\n%s", len(errs), all)
	}
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__good__echo","arguments":{"text":"ok"}}`); res.Content != "echo: ok" {
		t.Errorf("the good server beside them: %+v", res)
	}
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__silent__x"}`); !res.IsError || !strings.Contains(res.Content, "did not answer") {
		t.Errorf("a call to the server that did not start: %+v", res)
	}
	if left := procsMatching(marker); len(left) > 0 {
		t.Errorf("the silent server still runs: %q", left)
	}
}
