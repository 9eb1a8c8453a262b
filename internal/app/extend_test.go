package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestPlanAcceptedCarriesOn: a plan-mode turn is told it is planning and
// runs with the project read-only; accepting its plan leaves plan mode
// (the walls write again) and the next turn's prompt carries the plan.
func TestPlanAcceptedCarriesOn(t *testing.T) {
	srv, err := llmtest.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := testOptions(t)
	o.Source.Env["BASE_URL"] = srv.URL
	o.PermissionMode = "plan"
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Sandbox.Policy().ProjectReadOnly() {
		t.Fatal("plan mode did not make the project read-only")
	}
	srv.Enqueue(llmtest.Reply{Text: "PLAN: rename foo to bar in main.go"})
	res, err := s.Agent.Run(context.Background(), "plan the rename", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.AcceptPlan(res.Text, extend.ModeDefault)
	if s.Modes.Mode() != extend.ModeDefault || s.Sandbox.Policy().ProjectReadOnly() {
		t.Fatal("accepting the plan did not leave plan mode")
	}
	srv.Enqueue(llmtest.Reply{Text: "done"})
	if _, err := s.Agent.Run(context.Background(), "go", nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := lastUser(t, reqs[0].Messages), lastUser(t, reqs[1].Messages)
	if !strings.Contains(first, "[harness: plan mode]") || !strings.Contains(first, "plan the rename") {
		t.Errorf("the planning turn was not told it plans: %s", first)
	}
	if !strings.Contains(second, "accepted your plan") || !strings.Contains(second, "PLAN: rename foo to bar in main.go") {
		t.Errorf("the next turn does not carry the accepted plan: %s", second)
	}
	if strings.Contains(second, "[harness: plan mode]") {
		t.Errorf("the next turn is still told it plans: %s", second)
	}
}

// lastUser is the JSON of the last message of a request.
func lastUser(t *testing.T, msgs any) string {
	t.Helper()
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		t.Fatalf("messages: %s", raw)
	}
	return string(list[len(list)-1])
}
