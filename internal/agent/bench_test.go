package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// BenchmarkStep measures the loop's own overhead for one step (build the
// request, record the reply, run a trivial tool, record its result) over a
// 100-message history. The provider answers instantly from memory and the
// tool is glob on an empty project, so what remains is the harness's cost:
// history maintenance, request building, the synced session log.
func BenchmarkStep(b *testing.B) {
	for _, withLog := range []bool{false, true} {
		b.Run(fmt.Sprintf("log=%v", withLog), func(b *testing.B) {
			proj := filepath.Join(b.TempDir(), "p")
			os.MkdirAll(proj, 0o755)
			pol, _ := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: b.TempDir()})
			env := &tools.Env{Sandbox: &sandbox.None{L: walls.NewLive(pol)}}
			var lg *sessionlog.Log
			if withLog {
				lg, _ = sessionlog.Create(filepath.Join(b.TempDir(), "s.jsonl"), sessionlog.Meta{ID: "b"}, nil)
				defer lg.Close()
			}
			h := history.New(history.Config{SpillDir: b.TempDir()})
			for i := range 50 {
				h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: fmt.Sprint(i), Name: "bash", Input: []byte(`{"command":"ls"}`)}}})
				h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: fmt.Sprint(i), Content: strings.Repeat("output line\n", 40)}}})
			}
			call := use("c", "glob", `{"pattern":"*.go"}`)
			p := &loopProvider{}
			a := New(Options{Provider: p, Model: "m", System: "sys", Tools: tools.NewRegistry(tools.GateFunc(allowAll), tools.Builtins(env)...), History: h, Log: lg, MaxSteps: 1 << 30})
			p.call = call
			b.ResetTimer()
			p.n = b.N
			if _, err := a.Run(context.Background(), "go", nil); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// loopProvider calls a tool n times, then answers.
type loopProvider struct {
	n    int
	call llm.Block
}

func (p *loopProvider) Name() string { return "loop" }

func (p *loopProvider) Stream(ctx context.Context, req *llm.Request, on func(llm.Event)) (*llm.Reply, error) {
	if p.n <= 1 {
		return &llm.Reply{Message: llm.Text(llm.RoleAssistant, "done")}, nil
	}
	p.n--
	return &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{p.call}}, Usage: llm.Usage{Input: 20000}}, nil
}
