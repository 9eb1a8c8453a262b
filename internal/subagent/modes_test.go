package subagent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/tools"
)

// hostWriter stands for an MCP server's tool that writes (no readOnlyHint):
// it runs in a process of its own, outside the walls of the moment, and
// here writes the host file path directly.
type hostWriter struct{ path string }

func (w hostWriter) Spec() llm.Tool {
	return llm.Tool{Name: "mcp__srv__put", Description: "(MCP server srv) Write a file.", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (w hostWriter) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Tool: "mcp__srv__put", Command: "{}"}, nil
}

func (w hostWriter) Run(context.Context, json.RawMessage) tools.Result {
	if err := os.WriteFile(w.path, []byte("written"), 0o644); err != nil {
		return tools.Errorf("%v", err)
	}
	return tools.Result{Content: "written"}
}

// permGate is the session's permission gate as the registry sees it.
type permGate struct{ g *permission.Gate }

func (p permGate) Check(ctx context.Context, a tools.Access) (bool, string) {
	return p.g.Check(ctx, permission.Request{Tool: a.Tool, Command: a.Command, Path: a.Path, Write: a.Write, DeclaredReadOnly: a.ReadOnly})
}

// TestSubagentFollowsPlanMode: a sub-agent started in default mode, whose
// MCP write tool the rules allow, is between two steps when the session
// switches to plan mode. Its next step's call of that tool is refused with
// a message naming plan mode, and on the host the file is never written.
func TestSubagentFollowsPlanMode(t *testing.T) {
	target := filepath.Join(t.TempDir(), "outside-the-walls-of-the-moment.txt")
	e := newEnv(t, hostWriter{target})
	live := e.main.Lookup("bash").(*tools.Bash).Env.Sandbox.Live()
	g, err := permission.New(permission.Options{Policy: live, Allow: []string{"mcp__srv"}})
	if err != nil {
		t.Fatal(err)
	}
	modes := extend.NewModes(live, extend.ModeDefault)
	p := &fakeProvider{}
	p.reply = func(req *llm.Request) *llm.Reply {
		switch len(req.Messages) {
		case 1:
			return toolCall("c1", "glob", `{"pattern":"*"}`)
		case 3:
			// The user switches to plan mode while the sub-agent thinks.
			modes.Set(extend.ModePlan)
			return toolCall("c2", "mcp__srv__put", `{}`)
		}
		res, _ := lastResult(req)
		return text("report: " + res)
	}
	var usage llm.Usage
	var mu sync.Mutex
	c := e.config(p, &usage, &mu)
	c.Gate = permGate{g}
	res := New(c).Run(context.Background(), json.RawMessage(`{"description":"look","prompt":"look around"}`))
	if _, err := os.Stat(target); err == nil {
		t.Errorf("the sub-agent's MCP write ran after the switch to plan mode (report: %s)", res.Content)
	}
	if !strings.Contains(res.Content, "plan mode") {
		t.Errorf("the sub-agent was not told why: %s", res.Content)
	}
}
