package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// switchingPrompter switches into plan mode while the user is asked, then
// answers yes.
type switchingPrompter struct{ pol *walls.Live }

func (p switchingPrompter) Prompt(context.Context, Request, Decision, string) (Answer, error) {
	p.pol.SetProjectReadOnly(true)
	return Answer{Choice: Yes}, nil
}

// TestPlanModeMCP: while the project is read-only (plan mode), an MCP
// tool that does not declare itself read-only is denied, whatever a rule,
// a hook's allow or --yolo says, with a message naming plan mode; one
// that declares itself read-only goes by the rules as before; outside plan
// mode nothing changes. A mode switched while the user is asked holds for
// that call too.
func TestPlanModeMCP(t *testing.T) {
	first, err := walls.NewPolicy(walls.PolicyOptions{Project: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pol := walls.NewLive(first)
	g := testGate(t, func(o *Options) {
		o.Policy = pol
		o.Allow = []string{"mcp__srv"}
		o.Yolo = true
	})
	put := Request{Tool: "mcp__srv__put", Command: `{"path":"x"}`}
	hooked := put
	hooked.Override, hooked.OverrideBy = Allow, "PreToolUse hook: allow"
	echo := Request{Tool: "mcp__srv__echo", DeclaredReadOnly: true}
	bash := Request{Tool: "bash", Command: "ls"}
	for _, plan := range []bool{false, true} {
		pol.SetProjectReadOnly(plan)
		for _, tt := range []struct {
			req  Request
			want Verdict
		}{
			{put, map[bool]Verdict{false: Allow, true: Deny}[plan]},
			{hooked, map[bool]Verdict{false: Allow, true: Deny}[plan]},
			{echo, Allow},
			{bash, Allow}, // the walls hold commands in plan mode; the gate is unchanged
		} {
			d := g.Decide(tt.req)
			if d.Verdict != tt.want {
				t.Errorf("plan mode %v: Decide(%s) = %s (%s), want %s", plan, tt.req.Tool, d.Verdict, d.Rule, tt.want)
			}
			if d.Verdict == Deny && !strings.Contains(d.Reason, "plan mode") {
				t.Errorf("the refusal does not name plan mode: %q", d.Reason)
			}
		}
	}

	pol.SetProjectReadOnly(false)
	asked := testGate(t, func(o *Options) {
		o.Policy = pol
		o.Prompter = switchingPrompter{pol}
	})
	if ok, msg := asked.Check(context.Background(), put); ok || !strings.Contains(msg, "plan mode") {
		t.Errorf("a call asked about when plan mode began during the question: ok=%v %q", ok, msg)
	}
}
