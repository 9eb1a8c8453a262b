package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/permission"
)

// mcpOptions configures a session with the Go MCP server of kind (this
// test binary) in a --mcp-config file, the fake provider, and MCP_TOOLS.
func mcpOptions(t *testing.T, kind, mode string) (Options, *llmtest.Server) {
	t.Helper()
	o := testOptions(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"srv": map[string]any{"command": exe, "env": map[string]string{mcptest.KindEnv: kind}},
	}})
	os.WriteFile(cfg, raw, 0o644)
	o.MCPConfigs = []string{cfg}
	o.Allow = []string{"mcp__srv"}
	srv := llmtest.NewServer(t)
	o.Source.Env["BASE_URL"] = srv.URL
	o.Source.Env["MCP_TOOLS"] = mode
	return o, srv
}

// prefixOf is what a request sends before its messages: the tool
// definitions and the system prompt, as sent.
func prefixOf(t *testing.T, body []byte) (tools, system string) {
	t.Helper()
	var req struct {
		Tools  json.RawMessage `json:"tools"`
		System json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return string(req.Tools), string(req.System)
}

// TestMCPLazyCost: with 50 MCP tools of the size real servers' are, what
// each request costs with every schema sent (MCP_TOOLS=eager) and with the
// two lazy tools (the default); and in the lazy session the request prefix
// (tools and system) stays byte-for-byte the same across the first use of
// a tool, while the messages only grow, so the provider's cache holds.
// Tokens are the fake provider's count (llmtest.CountTokens, bytes/3).
func TestMCPLazyCost(t *testing.T) {
	cost := map[string]int{}
	toolBytes := map[string]int{}
	for _, mode := range []string{"none", "eager", "lazy"} {
		o, srv := mcpOptions(t, "many", mode)
		if mode == "none" {
			o.MCPConfigs = nil // the built-in tools alone: the baseline
		}
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		switch mode {
		case "none":
			// nothing to call
		case "eager":
			srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__srv__operation_07", Input: `{"path":"."}`}}})
		default:
			srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_search", Input: `{"query":"operation 7"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__srv__operation_07","arguments":{"path":"."}}`}}})
		}
		srv.Enqueue(llmtest.Reply{Text: "done"})
		if _, err := s.Agent.Run(context.Background(), "run operation 7", nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		if mode != "none" && !strings.Contains(string(last.Body), "done operation_07") {
			t.Errorf("%s: the tool's result did not reach the model:\n%s", mode, last.Body)
		}
		tools0, _ := prefixOf(t, reqs[0].Body)
		toolBytes[mode] = len(tools0)
		cost[mode] = llmtest.CountTokens(reqs[0].Body)
		t.Logf("%s: first request %d tokens (tool definitions %d bytes, %d tools); %d requests", mode, cost[mode], len(tools0), len(reqs[0].Tools), len(reqs))
		if mode != "lazy" {
			continue
		}
		var prevMsgs []json.RawMessage
		for i, r := range reqs {
			tl, sys := prefixOf(t, r.Body)
			if t0, s0 := prefixOf(t, reqs[0].Body); tl != t0 || sys != s0 {
				t.Errorf("request %d: the tools or system prompt changed after a tool's first use", i)
			}
			var body struct{ Messages []json.RawMessage }
			json.Unmarshal(r.Body, &body)
			// Every earlier message goes again as it was (the reminder
			// rides at the end of the last user message, so the last one
			// is compared without it).
			// The rolling cache_control marker moves by design; it is not
			// part of the cached text.
			for j := 0; j+1 < len(prevMsgs); j++ {
				if withoutCacheControl(prevMsgs[j]) != withoutCacheControl(body.Messages[j]) {
					t.Errorf("request %d: message %d changed", i, j)
				}
			}
			prevMsgs = body.Messages
		}
	}
	eager, lazy := toolBytes["eager"]-toolBytes["none"], toolBytes["lazy"]-toolBytes["none"]
	if lazy*20 > eager {
		t.Errorf("the MCP tools' definitions: lazy %d bytes, eager %d: want lazy under a twentieth", lazy, eager)
	}
	t.Logf("per request with 50 MCP tools: eager %d tokens, lazy %d tokens, built-in tools alone %d (MCP's share: eager %d, lazy %d tokens)",
		cost["eager"], cost["lazy"], cost["none"], cost["eager"]-cost["none"], cost["lazy"]-cost["none"])
}

// withoutCacheControl is a message's JSON without its cache_control marks.
func withoutCacheControl(raw json.RawMessage) string {
	var v any
	json.Unmarshal(raw, &v)
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "cache_control")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// TestMCPResultCapped: an MCP result goes through the same cap and spill
// as any tool result: a long one reaches the model as head, tail and a
// marker naming the spill file, which holds the whole text.
func TestMCPResultCapped(t *testing.T) {
	o, srv := mcpOptions(t, "full", "lazy")
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__srv__big","arguments":{"n":60000}}`}}},
		llmtest.Reply{Text: "done"})
	// The spill files are swept when the turn ends: look while it runs.
	spilled := map[string]int{}
	srv.Observe(func(llmtest.Request) {
		files, _ := filepath.Glob(filepath.Join(s.History.Config().SpillDir, "spill-*.txt"))
		for _, f := range files {
			raw, _ := os.ReadFile(f)
			spilled[filepath.Base(f)] = len(raw)
		}
	})
	if _, err := s.Agent.Run(context.Background(), "big", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if strings.Contains(body, strings.Repeat("x", 30000)) || !strings.Contains(body, "[harness cap: ") {
		t.Errorf("the 60000-byte result was not capped")
	}
	if len(spilled) != 1 {
		t.Fatalf("spill files while the turn ran: %v", spilled)
	}
	for name, n := range spilled {
		if !strings.Contains(body, name) || n != 60000 {
			t.Errorf("spill file %s (%d bytes) not named in the request, or not the whole result", name, n)
		}
	}
}

// promptAnswers answers the approval prompts in order and records them.
type promptAnswers struct {
	answers []permission.Choice
	asked   []permission.Request
}

func (p *promptAnswers) Prompt(_ context.Context, req permission.Request, _ permission.Decision, _ string) (permission.Answer, error) {
	p.asked = append(p.asked, req)
	c := p.answers[0]
	p.answers = p.answers[1:]
	return permission.Answer{Choice: c}, nil
}

// TestMCPProjectApproval: a project's .mcp.json server asks before it runs;
// "always" remembers the definition, so the next session does not ask;
// a changed definition asks again; no answer leaves it stopped, with a
// warning, and the session opens.
func TestMCPProjectApproval(t *testing.T) {
	o, _ := mcpOptions(t, "full", "lazy")
	exe, _ := os.Executable()
	proj := o.WorkDir
	write := func(kind string) {
		raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"proj": map[string]any{"command": exe, "env": map[string]string{mcptest.KindEnv: kind}}}})
		os.WriteFile(filepath.Join(proj, ".mcp.json"), raw, 0o644)
	}
	write("full")
	o.MCPConfigs = nil
	open := func(answers ...permission.Choice) (*Session, *promptAnswers) {
		t.Helper()
		p := &promptAnswers{answers: answers}
		o.Prompter = p
		s, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s, p
	}
	connected := func(s *Session) bool {
		st := s.MCP.Statuses()
		return len(st) == 1 && st[0].Err == "" && st[0].Tools > 0
	}

	s, p := open(permission.Always)
	if len(p.asked) != 1 || p.asked[0].Tool != "mcp_server" || !strings.Contains(p.asked[0].Command, ".mcp.json") || !connected(s) {
		t.Fatalf("first session: asked %+v, statuses %+v", p.asked, s.MCP.Statuses())
	}
	s.Close()
	s, p = open()
	if len(p.asked) != 0 || !connected(s) {
		t.Errorf("approved: asked %+v, statuses %+v", p.asked, s.MCP.Statuses())
	}
	s.Close()
	write("changed")
	s, p = open(permission.No)
	if len(p.asked) != 1 || len(s.MCP.Statuses()) != 0 {
		t.Errorf("changed definition: asked %d times, statuses %+v", len(p.asked), s.MCP.Statuses())
	}
	warned := false
	for _, w := range s.Warnings {
		warned = warned || strings.Contains(w.Text, "MCP server proj") && strings.Contains(w.Text, "did not approve")
	}
	if !warned {
		t.Errorf("no warning that proj did not start: %+v", s.Warnings)
	}
	if _, err := os.Stat(mcp.ApprovalsFile(o.Source.Home)); err != nil {
		t.Errorf("approvals file: %v", err)
	}
}
