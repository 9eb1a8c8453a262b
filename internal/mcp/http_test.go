package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
)

// TestRemoteServers: the Go server over streamable HTTP and over the older
// SSE transport, on loopback: the configured headers reach it (expanded
// from the environment), its tools are listed and called, a tool list
// change is followed, and the client connects to no other host than the
// URL's unless CheckNet allows it.
func TestRemoteServers(t *testing.T) {
	srv := mcptest.Server("full")
	var mu sync.Mutex
	var auth []string
	record := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	streamable := httptest.NewServer(record(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(streamable.Close) // after the manager's Close: it waits for the client's open streams
	sse := httptest.NewServer(record(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(sse.Close)

	var notes []string
	var nmu sync.Mutex
	m := start(t, nil, Options{
		Getenv: func(k string) string { return map[string]string{"TOKEN": "tok-123"}[k] },
		Notify: func(s string) { nmu.Lock(); notes = append(notes, s); nmu.Unlock() },
	},
		Server{Name: "web", Type: "http", URL: streamable.URL, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}, Scope: ScopeUser},
		Server{Name: "old", Type: "sse", URL: sse.URL, Scope: ScopeUser})
	ts := m.Tools(true)
	for _, name := range []string{"mcp__web__echo", "mcp__old__echo"} {
		if res := run(t, ts, "mcp_call", `{"name":"`+name+`","arguments":{"text":"over http"}}`); res.IsError || res.Content != "echo: over http" {
			t.Errorf("%s: %+v", name, res)
		}
	}
	mu.Lock()
	sawToken := false
	for _, a := range auth {
		sawToken = sawToken || a == "Bearer tok-123"
	}
	mu.Unlock()
	if !sawToken {
		t.Errorf("the Authorization header did not arrive expanded: %q", auth)
	}

	// A tool added at run time: the notification refreshes the list, the
	// user is told, and mcp_search finds it (the tool definitions sent to
	// the model do not change).
	before := m.Tools(true)[0].Spec()
	if res := run(t, ts, "mcp_call", `{"name":"mcp__web__grow"}`); res.IsError {
		t.Fatalf("grow: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(m.Search("added", "web"), "mcp__web__added") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := m.Search("added", "web"); !strings.Contains(got, "mcp__web__added") {
		t.Errorf("the added tool was not found after list_changed:\n%s", got)
	}
	if res := run(t, ts, "mcp_call", `{"name":"mcp__web__added"}`); res.Content != "added works" {
		t.Errorf("added: %+v", res)
	}
	if after := m.Tools(true)[0].Spec(); string(after.Schema) != string(before.Schema) || after.Description != before.Description {
		t.Errorf("mcp_search's definition changed with the tool list")
	}
	nmu.Lock()
	if !strings.Contains(strings.Join(notes, "\n"), "changed its tools") {
		t.Errorf("the user was not told of the change: %q", notes)
	}
	nmu.Unlock()

	// Another host than the URL's: refused without CheckNet, asked with it.
	c := m.httpClient(Server{Name: "web", URL: streamable.URL})
	if _, err := c.Get("http://127.0.0.2:9/"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a connection to another host: %v", err)
	}
	asked := ""
	m2 := &Manager{o: Options{CheckNet: func(ctx context.Context, host string, port int) error {
		asked = host
		return errors.New("denied by the net rules")
	}}}
	if _, err := m2.httpClient(Server{Name: "web", URL: streamable.URL}).Get("http://127.0.0.2:9/"); err == nil || asked != "127.0.0.2" {
		t.Errorf("CheckNet was not asked (%q): %v", asked, err)
	}
}

// TestRemoteServerDown: a remote server that does not answer is a start
// error naming it; a server that answers HTTP but not MCP likewise.
func TestRemoteServerDown(t *testing.T) {
	notMCP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"this is": not json`))
	}))
	defer notMCP.Close()
	_, errs := Start(context.Background(), []Server{
		{Name: "gone", Type: "http", URL: "http://127.0.0.1:1/mcp"},
		{Name: "bad", Type: "http", URL: notMCP.URL},
	}, Options{StartTimeout: 5 * time.Second})
	if len(errs) != 2 || !strings.Contains(errs[0].Error()+errs[1].Error(), "MCP server gone") || !strings.Contains(errs[0].Error()+errs[1].Error(), "MCP server bad") {
		t.Errorf("errors: %v", errs)
	}
}
