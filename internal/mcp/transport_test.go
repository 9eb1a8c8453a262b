package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/testenv"
)

// seen is what a server's HTTP handler saw, request by request.
type seen struct {
	mu   sync.Mutex
	reqs []string // "METHOD session-id protocol-version accept"
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Method+" "+r.Header.Get("Mcp-Session-Id")+" "+r.Header.Get("MCP-Protocol-Version")+" "+r.Header.Get("Accept"))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// TestStreamableHTTP: the Go SDK's streamable HTTP server in its three
// shapes (answers as event streams, as JSON, stateless): harness's client
// lists and calls tools and reads prompts and resources through each;
// every POST accepts both answer types, the session id the server gave
// goes back on every later request with the negotiated protocol version,
// the GET stream is opened where offered (405 where not), and Close ends
// the session with a DELETE.
func TestStreamableHTTP(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *sdk.StreamableHTTPOptions
	}{
		{"event streams", nil},
		{"JSON answers", &sdk.StreamableHTTPOptions{JSONResponse: true}},
		{"stateless", &sdk.StreamableHTTPOptions{Stateless: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sn seen
			srv := httptest.NewServer(sn.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.Server("full") }, tc.opts)))
			t.Cleanup(srv.Close)
			m := start(t, nil, Options{}, Server{Name: "web", Type: "http", URL: srv.URL, Scope: ScopeUser})
			if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__web__echo","arguments":{"text":"x"}}`); res.Content != "echo: x" {
				t.Errorf("echo: %+v", res)
			}
			if p, ok := m.PromptByCommand("mcp__web__review"); !ok {
				t.Errorf("no prompt: %+v", m.Prompts())
			} else if got, err := m.GetPrompt(t.Context(), p, "a.go"); err != nil || got != "Review a.go carefully." {
				t.Errorf("prompt: %q %v", got, err)
			}
			if got, err := m.ReadResource(t.Context(), "web", "test://readme"); err != nil || got != "the readme" {
				t.Errorf("resource: %q %v", got, err)
			}
			m.Close()

			reqs := sn.all()
			if len(reqs) < 3 {
				t.Fatalf("requests: %q", reqs)
			}
			first := strings.Fields(reqs[0])
			if first[0] != "POST" || !strings.Contains(reqs[0], "application/json, text/event-stream") {
				t.Errorf("the handshake: %q", reqs[0])
			}
			// From the first answer that gave a session id on, every
			// request carries it and the negotiated version.
			sid, joined := "", strings.Join(reqs, "\n")
			for _, r := range reqs[1:] {
				f := strings.Fields(r)
				if tc.name == "stateless" {
					if !strings.Contains(r, " 2025-11-25 ") && !strings.Contains(r, " 2026-07-28 ") && r != reqs[1] {
						t.Errorf("request without the protocol version: %q", r)
					}
					continue
				}
				if sid == "" && len(f) > 2 && f[2] != "" && f[1] != "application/json," {
					sid = f[1]
				}
				if sid != "" && (f[1] != sid || f[2] != "2025-11-25") {
					t.Errorf("request without the session id %s or version: %q", sid, r)
				}
			}
			if tc.name != "stateless" {
				if sid == "" {
					t.Fatalf("no session id:\n%s", joined)
				}
				if !strings.Contains(joined, "GET "+sid+" 2025-11-25 text/event-stream") {
					t.Errorf("no GET stream opened:\n%s", joined)
				}
				if !strings.Contains(joined, "DELETE "+sid) {
					t.Errorf("the session was not ended with DELETE:\n%s", joined)
				}
			}
		})
	}
}

// TestStreamableSessionEnded: a server that forgot the session (HTTP 404
// for its id) gets a new one, and the call is sent again in it.
func TestStreamableSessionEnded(t *testing.T) {
	var forget atomic.Bool
	var sn seen
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.Server("full") }, nil)
	srv := httptest.NewServer(sn.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if forget.Load() && r.Header.Get("Mcp-Session-Id") != "" && r.Method == http.MethodPost {
			forget.Store(false)
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})))
	t.Cleanup(srv.Close)
	var notes []string
	var mu sync.Mutex
	m := start(t, nil, Options{Notify: func(s string) { mu.Lock(); notes = append(notes, s); mu.Unlock() }}, Server{Name: "web", Type: "http", URL: srv.URL, Scope: ScopeUser})
	forget.Store(true)
	if res := run(t, m.Tools(true), "mcp_call", `{"name":"mcp__web__echo","arguments":{"text":"again"}}`); res.Content != "echo: again" {
		t.Errorf("after the server forgot the session: %+v", res)
	}
	inits := 0
	for _, r := range sn.all() {
		if strings.HasPrefix(r, "POST   ") {
			inits++ // no session id and no version: an initialize
		}
	}
	if inits != 2 {
		t.Errorf("%d initializations, want 2:\n%s", inits, strings.Join(sn.all(), "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(notes, "\n"), "ended its session") {
		t.Errorf("notes: %q", notes)
	}
}

// TestStreamableErrors: what a streamable server answers wrongly becomes
// an error that says what happened, never a hang: an HTTP error status
// with its body, a body that is not JSON, an event stream that ends
// before the answer.
func TestStreamableErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "database on fire", 500) }, "Internal Server Error"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("<html>"))
		}, "invalid character '<'"},
		{"stream without the answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(": nothing\n\n"))
		}, "terminated without response"},
		{"202 for a request", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }, `unsupported content type ""`},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>login here</html>"))
		}, `unsupported content type "text/html"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			began := time.Now()
			_, errs := Start(t.Context(), []Server{{Name: "bad", Type: "http", URL: srv.URL}}, Options{StartTimeout: 10 * time.Second})
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) || !strings.Contains(errs[0].Error(), "MCP server bad") {
				t.Errorf("errors: %v, want %q", errs, tc.want)
			}
			if time.Since(began) > 5*time.Second {
				t.Errorf("took %s", time.Since(began))
			}
		})
	}
}

// TestPagination: lists longer than the server's page come whole, page by
// page (nextCursor), over the older HTTP+SSE transport too.
func TestPagination(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "paged", Version: "1"}, &sdk.ServerOptions{PageSize: 2})
	for i := range 5 {
		name := fmt.Sprintf("tool%d", i)
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
		})
		srv.AddPrompt(&sdk.Prompt{Name: fmt.Sprintf("prompt%d", i)}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{}, nil
		})
		srv.AddResource(&sdk.Resource{URI: fmt.Sprintf("test://r%d", i), Name: fmt.Sprintf("r%d", i)}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
	}
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(sse.Close)
	m := start(t, nil, Options{}, Server{Name: "a", Type: "http", URL: streamable.URL, Scope: ScopeUser}, Server{Name: "b", Type: "sse", URL: sse.URL, Scope: ScopeUser})
	for _, st := range m.Statuses() {
		if st.Tools != 5 || st.Prompts != 5 || st.Resources != 5 || st.Err != "" {
			t.Errorf("%+v", st)
		}
	}
	if res := run(t, m.Tools(false), "mcp__b__tool4", `{}`); res.Content != "tool4" {
		t.Errorf("the last page's tool: %+v", res)
	}
}

// TestServerRequests: a server's own requests during a call reach
// harness and are answered: ping with a result, sampling/createMessage
// and elicitation/create (not declared, so the server's SDK refuses to
// send them) fail at once, never left waiting, over both HTTP transports.
func TestServerRequests(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "asks", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var out []string
		out = append(out, fmt.Sprintf("ping: %v", r.Session.Ping(ctx, nil)))
		// Deprecated in the SDK's newest version, but servers of
		// 2025-11-25 (harness's) still send them: harness must refuse.
		//lint:ignore SA1019 a server of 2025-11-25 still asks for roots
		_, err := r.Session.ListRoots(ctx, nil)
		out = append(out, fmt.Sprintf("roots: %v", err))
		//lint:ignore SA1019 a server of 2025-11-25 still asks for sampling
		_, err = r.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 1, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		out = append(out, fmt.Sprintf("sampling: %v", err))
		_, err = r.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		out = append(out, fmt.Sprintf("elicitation: %v", err))
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(out, "\n")}}}, nil
	})
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(sse.Close)
	m := start(t, nil, Options{CallTimeout: 10 * time.Second}, Server{Name: "a", Type: "http", URL: streamable.URL, Scope: ScopeUser}, Server{Name: "b", Type: "sse", URL: sse.URL, Scope: ScopeUser})
	for _, name := range []string{"mcp__a__ask", "mcp__b__ask"} {
		res := run(t, m.Tools(false), name, `{}`)
		t.Logf("%s:\n%s", name, res.Content)
		if res.IsError || !strings.Contains(res.Content, "ping: <nil>") || strings.Contains(res.Content, "sampling: <nil>") || !strings.Contains(res.Content, "elicitation: ") || strings.Contains(res.Content, "elicitation: <nil>") {
			t.Errorf("%s: %+v", name, res)
		}
	}
}

// TestStreamableResume: an answer's event stream that breaks before the
// answer is resumed with a GET carrying Last-Event-ID; where the server
// cannot resume it, the call fails saying so, without waiting.
func TestStreamableResume(t *testing.T) {
	testenv.Slow(t)
	for _, resumable := range []bool{true, false} {
		t.Run(fmt.Sprint("resumable=", resumable), func(t *testing.T) {
			var mu sync.Mutex
			var resumedFrom []string
			var listID json.RawMessage // the tools/list request's id, answered on the resumed stream
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					last := r.Header.Get("Last-Event-ID")
					if last == "" || !resumable {
						w.WriteHeader(http.StatusMethodNotAllowed)
						return
					}
					mu.Lock()
					resumedFrom = append(resumedFrom, last)
					mu.Unlock()
					w.Header().Set("Content-Type", "text/event-stream")
					mu.Lock()
					id := listID
					mu.Unlock()
					fmt.Fprintf(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n", id)
					return
				}
				if r.Method == http.MethodDelete {
					return
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				json.NewDecoder(r.Body).Decode(&m)
				switch m.Method {
				case "initialize":
					w.Header().Set("Mcp-Session-Id", "s1")
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}}`, m.ID)
				case "tools/list":
					mu.Lock()
					listID = m.ID
					mu.Unlock()
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "id: e1\ndata:\n\n") // a priming event, then the stream breaks
				case "server/discover": // the newest revision's handshake: not this server's
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no server/discover"}}`, m.ID)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			t.Cleanup(srv.Close)
			m, errs := Start(t.Context(), []Server{{Name: "f", Type: "http", URL: srv.URL}}, Options{StartTimeout: 10 * time.Second})
			defer m.Close()
			if resumable {
				if len(errs) != 0 || m.Statuses()[0].Tools != 1 {
					t.Errorf("errors %v, status %+v", errs, m.Statuses())
				}
				mu.Lock()
				if len(resumedFrom) != 1 || resumedFrom[0] != "e1" {
					t.Errorf("resumed from %q", resumedFrom)
				}
				mu.Unlock()
			} else if len(errs) != 1 || !strings.Contains(errs[0].Error(), "tools/list") || !strings.Contains(errs[0].Error(), "Method Not Allowed") {
				t.Errorf("errors %v", errs)
			}
		})
	}
}
