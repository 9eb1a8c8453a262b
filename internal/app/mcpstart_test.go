package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// slowServerOptions is mcpOptions with the server behind a script that
// sleeps first.
func slowServerOptions(t *testing.T, sleep time.Duration) (Options, *llmtest.Server) {
	t.Helper()
	o, srv := mcpOptions(t, "full", "lazy")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "slow")
	os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\nsleep %g\nexec %q\n", sleep.Seconds(), exe)), 0o755)
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"srv": map[string]any{"command": script, "env": map[string]string{mcptest.KindEnv: "full"}},
	}})
	cfg := filepath.Join(dir, "mcp.json")
	os.WriteFile(cfg, raw, 0o644)
	o.MCPConfigs = []string{cfg}
	o.MCPInBackground = true
	return o, srv
}

// TestMCPInBackground: with MCPInBackground, Open returns while a slow
// server starts; the watcher hears of its start's end with its tools; a
// call made meanwhile waits for the server and gets its answer.
func TestMCPInBackground(t *testing.T) {
	testenv.Slow(t)
	const sleep = 2 * time.Second
	o, srv := slowServerOptions(t, sleep)
	began := time.Now()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if took := time.Since(began); took >= sleep {
		t.Errorf("Open took %s: it waited for the server's start (%s)", took, sleep)
	}
	if got := s.MCPStarting(); len(got) != 1 || got[0] != "srv" {
		t.Errorf("MCPStarting = %v, want [srv]", got)
	}
	ended := make(chan MCPStarted, 1)
	s.WatchMCP(func(e MCPStarted) { ended <- e })

	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__srv__echo","arguments":{"text":"hello from the slow one"}}`}}},
		llmtest.Reply{Text: "done"})
	if _, err := s.Agent.Run(context.Background(), "call it", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "hello from the slow one") {
		t.Errorf("the call made while the server started did not wait for it:\n%s", body)
	}
	select {
	case e := <-ended:
		if e.Name != "srv" || e.Err != nil || e.Tools == 0 {
			t.Errorf("the watcher heard %+v, want srv connected with its tools", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher never heard of the start's end")
	}
	if got := s.MCPStarting(); len(got) != 0 {
		t.Errorf("MCPStarting after the start = %v", got)
	}
	// A watcher set late hears of what already ended.
	late := make(chan MCPStarted, 1)
	s.WatchMCP(func(e MCPStarted) { late <- e })
	if e := <-late; e.Name != "srv" {
		t.Errorf("a late watcher heard %+v", e)
	}
}

// TestMCPWaitCancelled: a call that waits for a server still starting
// ends as soon as its context does (Esc), saying what it waited for.
func TestMCPWaitCancelled(t *testing.T) {
	o, _ := slowServerOptions(t, 20*time.Second)
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := s.Registry.Lookup("mcp_call")
	if call == nil {
		t.Fatal("no mcp_call tool")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	res := call.Run(ctx, json.RawMessage(`{"name":"mcp__srv__echo","arguments":{"text":"x"}}`))
	if took := time.Since(began); took > time.Second {
		t.Errorf("the waiting call ended %s after its context, want at once", took)
	}
	if !res.IsError || !strings.Contains(res.Content, "cancelled while waiting for MCP servers to start (srv)") {
		t.Errorf("result %+v", res)
	}
}

func TestWaitingToolServer(t *testing.T) {
	w := &waitingTool{names: []string{"a", "a__b", "fs"}}
	for _, tt := range []struct{ input, want string }{
		{`{"name":"mcp__fs__read"}`, "fs"},
		{`{"name":"mcp__a__b__tool"}`, "a__b"},
		{`{"name":"mcp__a__tool"}`, "a"},
		{`{"query":"read","server":"fs"}`, "fs"},
		{`{"query":"read"}`, ""},
		{`not json`, ""},
	} {
		if got := w.server(json.RawMessage(tt.input)); got != tt.want {
			t.Errorf("server(%s) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

// TestMCPEagerInBackground: with MCP_TOOLS=eager, Open still returns
// while a slow server starts (the prompt is usable at once); the first
// request waits for the start and sends every server tool with its
// schema, the system prompt with the server's instructions, and the
// session log records that prompt; the second request sends the same
// prefix byte for byte; a sub-agent gets the tools too.
func TestMCPEagerInBackground(t *testing.T) {
	testenv.Slow(t)
	const sleep = 2 * time.Second
	o, srv := slowServerOptions(t, sleep)
	o.Source.Env["MCP_TOOLS"] = "eager"
	began := time.Now()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if took := time.Since(began); took >= sleep {
		t.Errorf("Open took %s: it waited for the server's start (%s)", took, sleep)
	}
	if s.Registry.Lookup("mcp__srv__echo") != nil {
		t.Fatal("the server's tool is there before it started")
	}
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__srv__echo", Input: `{"text":"eager hello"}`}}},
		llmtest.Reply{Text: "done"})
	if _, err := s.Agent.Run(context.Background(), "call it", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	tools0, system0 := prefixOf(t, reqs[0].Body)
	tools1, system1 := prefixOf(t, reqs[1].Body)
	if !strings.Contains(tools0, "mcp__srv__echo") || strings.Contains(tools0, "mcp_search") {
		t.Errorf("the first request's tools:\n%s", tools0)
	}
	if !strings.Contains(system0, mcptest.Instructions) {
		t.Errorf("the server's instructions are not in the system prompt:\n%.500s", system0)
	}
	if tools0 != tools1 || system0 != system1 {
		t.Error("the second request's prefix differs from the first's")
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "eager hello") {
		t.Errorf("the eager tool's answer is not in the second request:\n%.500s", body)
	}
	// The session log's prompt is the one sent.
	f, err := os.Open(s.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	entries, err := sessionlog.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	prompts := 0
	for _, e := range entries {
		if e.Type == sessionlog.TypePrompt {
			prompts++
			if !strings.Contains(e.System, mcptest.Instructions) || !strings.Contains(fmt.Sprint(e.Tools), "mcp__srv__echo") {
				t.Errorf("the logged prompt lacks the server's tools or instructions")
			}
		}
	}
	if prompts != 1 {
		t.Errorf("%d prompt entries in the log, want 1", prompts)
	}
	if task, ok := s.Registry.Lookup("task").(interface{ Tools() *tools.Registry }); !ok || task.Tools().Lookup("mcp__srv__echo") == nil {
		t.Errorf("the sub-agents lack the server's tool")
	}
}

// TestMCPEagerWaitStopped: Esc or Ctrl-C while the first request waits
// for the starts ends the turn at once, saying what it waited for; the
// next turn waits again.
func TestMCPEagerWaitStopped(t *testing.T) {
	o, _ := slowServerOptions(t, 20*time.Second)
	o.Source.Env["MCP_TOOLS"] = "eager"
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	_, err = s.Agent.Run(ctx, "hello", nil)
	if took := time.Since(began); took > time.Second {
		t.Errorf("the turn ended %s after its context, want at once", took)
	}
	if err == nil || !strings.Contains(err.Error(), "waiting for MCP servers to start (srv)") {
		t.Errorf("err = %v", err)
	}
	if n := len(s.History.Messages()); n != 0 {
		t.Errorf("%d messages in the history after a turn stopped before its prompt", n)
	}
}

// TestMCPLazyInstructions: lazy and started beside the session, a server
// connected by the first request has its instructions in that request's
// system prompt (the prompt logged is the one sent, and the next request
// sends it again); one still starting then has them in the first
// mcp_search answer that lists its tools instead.
func TestMCPLazyInstructions(t *testing.T) {
	testenv.Slow(t)
	for _, connectedFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("connected first %v", connectedFirst), func(t *testing.T) {
			o, srv := slowServerOptions(t, time.Second)
			s, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if connectedFirst {
				ended := make(chan MCPStarted, 1)
				s.WatchMCP(func(e MCPStarted) { ended <- e })
				if e := <-ended; e.Err != nil {
					t.Fatal(e.Err)
				}
			}
			srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_search", Input: `{"query":"echo"}`}}},
				llmtest.Reply{Text: "done"})
			if _, err := s.Agent.Run(context.Background(), "find it", nil); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			_, system0 := prefixOf(t, reqs[0].Body)
			_, system1 := prefixOf(t, reqs[1].Body)
			if system0 != system1 {
				t.Error("the system prompt changed between requests")
			}
			inSystem := strings.Contains(system0, mcptest.Instructions)
			inSearch := strings.Contains(string(reqs[1].Body), "Instructions from the MCP server(s), told once")
			if inSystem != connectedFirst || inSearch == connectedFirst {
				t.Errorf("instructions in the system prompt %v, in the search answer %v", inSystem, inSearch)
			}
		})
	}
}
