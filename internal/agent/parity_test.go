package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/replay"
	"github.com/harness-dev/harness/internal/testenv"
	"github.com/harness-dev/harness/internal/tools"
)

// recordedBash answers each bash call, in order, with the output a
// trajectory recorded for it.
type recordedBash struct {
	mu   sync.Mutex
	outs []llm.Block
}

func (b *recordedBash) Spec() llm.Tool {
	return llm.Tool{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (b *recordedBash) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Tool: "bash"}, nil
}

func (b *recordedBash) Run(context.Context, json.RawMessage) tools.Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.outs[0]
	b.outs = b.outs[1:]
	return tools.Result{Content: out.Content, IsError: out.IsError}
}

// recording is a provider that keeps the body of every request it sends.
type recording struct {
	llm.Provider
	mu     sync.Mutex
	bodies [][]byte
	canon  func(*llm.Request) []byte
}

func (r *recording) Stream(ctx context.Context, req *llm.Request, on func(llm.Event)) (*llm.Reply, error) {
	r.mu.Lock()
	r.bodies = append(r.bodies, r.canon(req))
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req, on)
}

// singleTurn reports whether t is one user turn of tool calls ending on an
// answer (no feedback, no second prompt): what the live loop runs from one
// prompt. A trajectory that ends on its last call's output (mini-swe-agent
// stops at its submit command) gets a final answer first.
func singleTurn(t *replay.Trajectory) bool {
	if n := len(t.Messages); n > 0 && t.Messages[n-1].Role == llm.RoleUser {
		t.Messages = append(t.Messages[:n:n], llm.Text(llm.RoleAssistant, "done"))
	}
	m := t.Messages
	if len(m) < 3 || m[0].Role != llm.RoleUser || len(m[0].Blocks) != 1 || m[0].Blocks[0].Type != llm.BlockText {
		return false
	}
	for i := 1; i < len(m); i++ {
		calls := len(m[i].ToolCalls())
		switch {
		case i%2 == 1 && m[i].Role != llm.RoleAssistant:
			return false
		case i%2 == 1 && i == len(m)-1:
			return calls == 0
		case i%2 == 1 && calls != 1:
			return false
		case i%2 == 0 && (len(m[i].Blocks) != 1 || m[i].Blocks[0].Type != llm.BlockToolResult):
			return false
		}
	}
	return false
}

// TestReplayMatchesLiveLoop replays recorded trajectories through the live
// agent loop (the real Anthropic adapter against the fake server, the
// recorded replies scripted, the recorded outputs returned by the tool)
// and through the context benchmark's replay, under the append strategy,
// and compares the body of every request: the messages, which results are
// stripped, where the in-turn edits happen (the closed rounds and the
// unthought messages), and the cache breakpoints they place. The bench
// costs exactly what the agent sends.
func TestReplayMatchesLiveLoop(t *testing.T) {
	testenv.Slow(t)
	dir := sharedTrajectoryDir(t)
	trajs, err := replay.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	enc := anthropic.New(anthropic.Config{APIKey: "k"})
	canonical := func(sys string, specs []llm.Tool) func(*llm.Request) []byte {
		return func(r *llm.Request) []byte {
			c := *r
			c.Model, c.MaxTokens, c.SessionID, c.Thinking = "m", 1024, "", llm.Thinking{}
			c.System, c.Tools = sys, specs
			b, err := enc.MarshalRequest(&c)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	checked, edited := 0, 0
	for _, tr := range trajs {
		if checked == 4 || !singleTurn(&tr) {
			continue
		}
		checked++
		canon := canonical(tr.System, tr.Tools)
		var bench [][]byte
		_, err := replay.Run(context.Background(), []replay.Trajectory{tr}, history.StrategyAppend, replay.Options{
			Pricing: replay.Anthropic, Window: 128000, NoReminder: true,
			Config:    history.Config{Disk: noDisk{}},
			OnRequest: func(r *llm.Request) { bench = append(bench, canon(r)) },
		})
		if err != nil {
			t.Fatal(err)
		}

		// The live loop: the fake server answers with the recorded
		// replies, in order; the tool with the recorded outputs.
		srv := llmtest.NewServer(t)
		var replies []llm.Message
		bash := &recordedBash{}
		for _, m := range tr.Messages[1:] {
			if m.Role == llm.RoleAssistant {
				replies = append(replies, m)
			} else {
				bash.outs = append(bash.outs, m.Blocks[0])
			}
		}
		var mu sync.Mutex
		srv.Handle(func(llmtest.Request) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			m := replies[0]
			replies = replies[1:]
			var r llmtest.Reply
			for _, b := range m.Blocks {
				switch b.Type {
				case llm.BlockText:
					r.Text += b.Text
				case llm.BlockToolUse:
					r.ToolCalls = append(r.ToolCalls, llmtest.ToolCall{ID: b.ID, Name: b.Name, Input: string(b.Input)})
				}
			}
			return r
		})
		rec := &recording{Provider: anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"}), canon: canon}
		h := history.New(history.Config{Strategy: history.Append, Window: 128000, Disk: noDisk{}})
		a := agent.New(agent.Options{
			Provider: rec, Model: "claude-sonnet-4-5", System: tr.System, SessionID: tr.Name,
			Tools:   tools.NewRegistry(tools.GateFunc(func(context.Context, tools.Access) (bool, string) { return true, "" }), bash),
			History: h, AppendOnly: true, MaxSteps: 1000,
		})
		if _, err := a.Run(context.Background(), tr.Messages[0].Blocks[0].Text, nil); err != nil {
			t.Fatalf("%s: the live loop failed: %v", tr.Name, err)
		}
		if len(rec.bodies) != len(bench) {
			t.Fatalf("%s: the live loop sent %d requests, the replay %d", tr.Name, len(rec.bodies), len(bench))
		}
		for i := range bench {
			if !bytes.Equal(rec.bodies[i], bench[i]) {
				k := 0
				for k < min(len(bench[i]), len(rec.bodies[i])) && bench[i][k] == rec.bodies[i][k] {
					k++
				}
				t.Fatalf("%s: request %d differs at byte %d:\n live:   …%s…\n replay: …%s…", tr.Name, i, k, around(rec.bodies[i], k), around(bench[i], k))
			}
			if bytes.Contains(bench[i], []byte(history.ClosedRound)) {
				edited++
			}
		}
		st := h.Stats()
		t.Logf("%s: %d requests identical; strips %d, closes %d", tr.Name, len(bench), st.Strips, st.Closes)
	}
	if checked == 0 {
		t.Fatal("no single-turn trajectory to compare")
	}
	if edited == 0 {
		t.Error("no request carried a closed round: the in-turn edits were not compared")
	}
}

func around(b []byte, k int) string {
	return strings.ReplaceAll(string(b[max(0, k-80):min(len(b), k+80)]), "\n", `\n`)
}

// noDisk holds no file: no tool input is stubbed (the live loop and the
// replay see the same disk).
type noDisk struct{}

func (noDisk) Sum(string, int) ([32]byte, bool) { return [32]byte{}, false }

// sharedTrajectoryDir returns the shared mini-swe-agent trajectories, or
// skips.
func sharedTrajectoryDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(wd, "..", "..", "..", "shared", "data", "trajectories", "mini-swe-agent")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared trajectories missing at %s", p)
	}
	return p
}
