package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// notices collects what a session tells the user.
type notices struct {
	mu   sync.Mutex
	text []string
}

func (n *notices) add(x notice.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.text = append(n.text, x.Text)
}

func (n *notices) all() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.text, "\n")
}

// callResult runs one turn whose model calls the MCP tool and returns
// the tool result the model got back (the last request's).
func callResult(t *testing.T, s *Session, srv *llmtest.Server, tool, args string) string {
	t.Helper()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"` + tool + `","arguments":` + args + `}`}}})
	srv.Enqueue(llmtest.Reply{Text: "done"})
	if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	return string(body.Messages[len(body.Messages)-1].Content)
}

// TestMCPHeadlessAsks: a headless session declares elicitation and
// sampling, declines a server's question at once (a notice says so) and
// refuses its sampling request unless a rule allows it, naming the rule;
// allowed, the request goes to the session's provider and model within
// the server's maxTokens, and its usage is in the session's total and
// cost ledger, labelled with the server.
func TestMCPHeadlessAsks(t *testing.T) {
	o, srv := mcpOptions(t, "full", "lazy")
	o.Allow = []string{"mcp__srv__ask", "mcp__srv__sample"}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var told notices
	s.SetNotify(told.add)

	if got := callResult(t, s, srv, "mcp__srv__ask", `{"text":"Who are you?"}`); !strings.Contains(got, "action: decline content: null") {
		t.Errorf("headless elicitation: %s", got)
	}
	if !strings.Contains(told.all(), `MCP server srv asked for your input ("Who are you?"); declined: no one to ask in a non-interactive run`) {
		t.Errorf("notices: %s", told.all())
	}
	before := len(srv.Requests())
	got := callResult(t, s, srv, "mcp__srv__sample", `{"text":"hi"}`)
	if !strings.Contains(got, "user rejected sampling request: no one to approve it in a non-interactive run; allow it with --allow mcp__srv__@sampling") {
		t.Errorf("headless sampling: %s", got)
	}
	if n := len(srv.Requests()) - before; n != 2 {
		t.Errorf("%d requests for the turn; want 2 (no sampling request sent)", n)
	}

	o, srv = mcpOptions(t, "full", "lazy")
	o.Allow = []string{"mcp__srv__sample", SamplingTool("srv")}
	s2, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp_call", Input: `{"name":"mcp__srv__sample","arguments":{"text":"hi","maxTokens":20}}`}}},
		llmtest.Reply{Text: "sampled!", Usage: llm.Usage{Input: 11, Output: 3}}, llmtest.Reply{Text: "done"})
	if _, err := s2.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var sampled struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Tools     []any  `json:"tools"`
		System    any    `json:"system"`
	}
	json.Unmarshal(reqs[1].Body, &sampled)
	if sampled.Model != "fake-model" || sampled.MaxTokens != 20 || len(sampled.Tools) != 0 || !strings.Contains(string(reqs[1].Body), "Be brief.") {
		t.Errorf("the sampling request: %s", reqs[1].Body)
	}
	if !strings.Contains(string(reqs[2].Body), "stop: endTurn text: sampled!") {
		t.Errorf("the tool result: %s", reqs[2].Body)
	}
	var rec *ledger.Record
	for _, r := range s2.Ledger.Records() {
		if r.Purpose == ledger.PurposeSampling {
			rec = &r
		}
	}
	if rec == nil || rec.Agent != "mcp srv sampling" || rec.Output != 3 || rec.InputTotal != 11 {
		t.Errorf("the ledger's record: %+v", rec)
	}
	if u := s2.Agent.Usage(); u.Output < 3 {
		t.Errorf("session usage %+v lacks the sampling request's", u)
	}
	entries, _ := sessionlog.ReadFile(s2.Log.Path())
	found := false
	for _, e := range entries {
		if e.Type == sessionlog.TypeUsage && e.Agent == "mcp srv sampling" && e.Usage != nil && e.Usage.Output == 3 {
			found = true
		}
	}
	if !found {
		t.Error("the log has no usage entry of the sampling request")
	}
}

// TestMCPElicitAsked: with a front end's form (Options.Elicit) the
// server's question goes to it, the answer to the server, and the log
// keeps what was asked and answered.
func TestMCPElicitAsked(t *testing.T) {
	o, srv := mcpOptions(t, "full", "lazy")
	var asked []*mcp.Elicitation
	o.Elicit = func(_ context.Context, q *mcp.Elicitation) (mcp.ElicitAnswer, error) {
		asked = append(asked, q)
		return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"name": "Ann", "subscribe": false}}, nil
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := callResult(t, s, srv, "mcp__srv__ask", `{"text":"Who are you?"}`)
	if !strings.Contains(got, `action: accept content: {\"age\":30,\"color\":\"g\",\"name\":\"Ann\",\"subscribe\":false}`) {
		t.Errorf("the server got: %s", got)
	}
	if len(asked) != 1 || asked[0].Server != "srv" || asked[0].Message != "Who are you?" || len(asked[0].Fields) != 4 {
		t.Errorf("the form: %+v", asked)
	}
	entries, _ := sessionlog.ReadFile(s.Log.Path())
	found := false
	for _, e := range entries {
		found = found || (e.Type == sessionlog.TypeNotice && e.Text == `MCP server srv asked for your input ("Who are you?"): accept`)
	}
	if !found {
		t.Error("the log does not keep the question and its answer")
	}
}
