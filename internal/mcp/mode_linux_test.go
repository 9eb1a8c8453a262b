package mcp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"
)

// sizeOf is a host file's size (-1 when it is missing).
func sizeOf(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// waitGrowing waits until path exists and grows.
func waitGrowing(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	first := sizeOf(path)
	for time.Now().Before(deadline) {
		if n := sizeOf(path); n > 0 && n > first {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never grew", path)
}

// TestFollowPlanMode: a stdio server started under writable walls writes
// the project on its own (tick) and through a tool that claims to be
// read-only (write). When plan mode makes the project read-only, Follow
// kills it at once and starts it again under the read-only walls: on the
// host, the file it was writing stops growing and the lying tool's file
// is never created, while its read-only tools still answer. When plan
// mode ends it is writable again.
func TestFollowPlanMode(t *testing.T) {
	testenv.Slow(t)
	needBwrap(t)
	f := newFixture(t)
	sb := f.open(t, sandbox.BackendBwrap)
	var notes strings.Builder
	var mu sync.Mutex
	m := start(t, sb, Options{Notify: func(s string) { mu.Lock(); notes.WriteString(s + "\n"); mu.Unlock() }}, f.goServer("go", "full"))
	told := func() string { mu.Lock(); defer mu.Unlock(); return notes.String() }
	ts := m.Tools(true)
	tick := filepath.Join(f.proj, "tick.txt")
	if res := run(t, ts, "mcp_call", `{"name":"mcp__go__tick","arguments":{"path":"`+tick+`"}}`); res.IsError {
		t.Fatalf("tick: %+v", res)
	}
	waitGrowing(t, tick)
	// A call in flight at the switch, of a tool that writes when it is
	// cancelled (cancelled.txt in the project).
	hung := make(chan string, 1)
	go func() { hung <- run(t, ts, "mcp_call", `{"name":"mcp__go__hang"}`).Content }()
	time.Sleep(300 * time.Millisecond)

	sb.Live().SetProjectReadOnly(true) // as extend.Modes.Set does, then its followers
	began := time.Now()
	said := m.Follow(true)
	t.Logf("Follow killed the server in %s", time.Since(began).Round(time.Millisecond))
	select {
	case got := <-hung:
		if !strings.Contains(got, "mode") {
			t.Errorf("the call in flight at the switch says: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("the call in flight did not end at the switch")
	}
	if len(said) == 0 || !strings.Contains(strings.Join(said, " "), "read-only walls") {
		t.Errorf("Follow said: %q", said)
	}
	// Nothing of the old server writes any more: the size is stable.
	before := sizeOf(tick)
	time.Sleep(time.Second)
	if after := sizeOf(tick); after != before {
		t.Errorf("the server started before plan mode still writes the project: %d bytes, then %d a second later", before, after)
	}
	if _, err := os.Stat(filepath.Join(f.proj, "cancelled.txt")); err == nil {
		st, _ := os.Stat(filepath.Join(f.proj, "cancelled.txt"))
		t.Errorf("the call in flight at the switch wrote the project after it (at %s)", st.ModTime().Format("15:04:05.000"))
	}
	lie := filepath.Join(f.proj, "lie.txt")
	res := run(t, ts, "mcp_call", `{"name":"mcp__go__write","arguments":{"path":"`+lie+`"}}`)
	if _, err := os.Stat(lie); err == nil {
		t.Errorf("a tool claiming to be read-only wrote the project in plan mode: %+v", res)
	}
	if !res.IsError {
		t.Errorf("the write in plan mode did not fail: %+v", res)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__go__echo","arguments":{"text":"planning"}}`); res.Content != "echo: planning" {
		t.Errorf("a read-only tool after the restart: %+v (notes %q)", res, told())
	}

	sb.Live().SetProjectReadOnly(false)
	m.Follow(false)
	res = run(t, ts, "mcp_call", `{"name":"mcp__go__write","arguments":{"path":"`+lie+`"}}`)
	if res.IsError || sizeOf(lie) != 3 {
		t.Errorf("after plan mode the server cannot write again: %+v (notes %q)", res, told())
	}
}

// TestFollowPlanModeRemote: a remote server (streamable HTTP, here in the
// test process, so its writes land on the host directly) cannot be
// restarted under any walls. In plan mode its tool without readOnlyHint
// is refused by the manager itself, even behind a gate that allows all
// (the moment between the gate's word and the call), and a call in
// flight at the switch is cancelled; its read-only tool still answers.
func TestFollowPlanModeRemote(t *testing.T) {
	t.Chdir(t.TempDir()) // the in-process server's hang writes cancelled.txt in the working directory
	srv := mcptest.Server("full")
	web := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(web.Close)
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	live := walls.NewLive(pol)
	m := start(t, &sandbox.None{L: live}, Options{}, Server{Name: "web", Type: "http", URL: web.URL, Scope: ScopeUser})
	ts := m.Tools(true)
	put := filepath.Join(t.TempDir(), "put.txt")
	call := `{"name":"mcp__web__put","arguments":{"path":"` + put + `"}}`
	if res := run(t, ts, "mcp_call", call); res.IsError || sizeOf(put) != 3 {
		t.Fatalf("put before plan mode: %+v", res)
	}
	os.Remove(put)
	hung := make(chan string, 1)
	go func() { hung <- run(t, ts, "mcp_call", `{"name":"mcp__web__hang"}`).Content }()
	time.Sleep(300 * time.Millisecond)

	live.SetProjectReadOnly(true)
	m.Follow(true)
	select {
	case got := <-hung:
		if !strings.Contains(got, "plan mode") {
			t.Errorf("the remote call in flight at the switch says: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("the remote call in flight did not end at the switch")
	}
	res := run(t, ts, "mcp_call", call)
	if sizeOf(put) != -1 || !res.IsError || !strings.Contains(res.Content, "plan mode") {
		t.Errorf("a remote tool without readOnlyHint in plan mode: %+v (file size %d)", res, sizeOf(put))
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__web__echo","arguments":{"text":"plan"}}`); res.Content != "echo: plan" {
		t.Errorf("a remote read-only tool in plan mode: %+v", res)
	}
}
