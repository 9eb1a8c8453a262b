package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// dirDisk is history.Disk over the real files (absolute paths).
type dirDisk struct{}

func (dirDisk) Sum(p string, size int) ([sha256.Size]byte, bool) {
	b, err := os.ReadFile(p)
	if err != nil || len(b) != size {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// The context-cost levers (input stubs of bodies on disk, folds of the
// harness's repeated feedback, trimming of old assistant text) under the
// append-only contract, through the real loop and the fake server's
// prefix check: every lever fires, no thinking block ever fails the
// check, and a body whose file was changed keeps its text.
func TestLeversUnderPreservedThinking(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("print('lever')\n", 20)
	long := strings.Repeat("Reasoning about the next step at some length. ", 25)
	turn := 0
	s := newSession40(t, "anthropic", history.Config{Window: 100000, Strategy: history.Append, TrimText: true, Disk: dirDisk{}}, true, func(r llmtest.Request) llmtest.Reply {
		if isCompaction(r) {
			return llmtest.Reply{Text: "<summary>## Goal\nlevers\n</summary>"}
		}
		n := stepsInTurn(r.Messages)
		think := fmt.Sprintf("turn %d step %d", turn, n)
		keep := filepath.Join(dir, fmt.Sprintf("keep%d.py", turn))
		changed := filepath.Join(dir, fmt.Sprintf("changed%d.py", turn))
		cmd := func(c string) []llmtest.ToolCall {
			in, _ := json.Marshal(map[string]string{"command": c})
			return []llmtest.ToolCall{{Name: "bash", Input: string(in)}}
		}
		switch n {
		case 0:
			return llmtest.Reply{Thinking: think, Text: long, ToolCalls: cmd("cat > " + keep + " <<'EOF'\n" + body + "EOF")}
		case 1:
			return llmtest.Reply{Thinking: think, ToolCalls: cmd("cat > " + changed + " <<'EOF'\n" + body + "EOF")}
		case 2:
			return llmtest.Reply{Thinking: think, ToolCalls: cmd("echo edited >> " + changed)}
		case 3, 4:
			return llmtest.Reply{Thinking: think, ToolCalls: []llmtest.ToolCall{{Name: "no_such_tool_in_this_harness_whatsoever", Input: `{}`}}}
		}
		return llmtest.Reply{Thinking: think, Text: fmt.Sprintf("turn %d done", turn)}
	})
	s.srv.PreservedThinking()
	s.srv.ContextLimit(1<<30, nil)
	ctx := context.Background()
	for turn = 1; turn <= 4; turn++ {
		if _, err := s.agent.Run(ctx, fmt.Sprintf("turn %d: go", turn), noteObs{&s.notes}); err != nil {
			t.Fatalf("turn %d: %v\nnotices: %q", turn, err, s.notes)
		}
	}
	if f := s.srv.PrefixFailures(); len(f) > 0 {
		t.Fatalf("%d thinking blocks failed the prefix check: %v", len(f), f)
	}
	reqs := s.srv.Requests()
	last, _ := json.Marshal(reqs[len(reqs)-1].Messages)
	sent := string(last)
	for _, want := range []string{"holds now (sha256 ", "[harness fold: the same feedback", "[harness trim: "} {
		if !strings.Contains(sent, want) {
			t.Errorf("the last request has no %q: a lever did not fire", want)
		}
	}
	// A body whose file changed since is sent whole, every time: as the
	// call's input, or in the text restating the call of a closed round.
	for i := 1; i <= 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("changed%d.py", i))
		cmd := strings.Trim(string(mustJSON("cat > "+p+" <<'EOF'\n"+body+"EOF")), `"`)
		restated := strings.Trim(string(mustJSON(cmd)), `"`)
		if !strings.Contains(sent, cmd) && !strings.Contains(sent, restated) {
			t.Errorf("the body written to %s (changed since) was stubbed", p)
		}
	}
	// Inside a tool loop nothing is edited: the turn's thinking goes back.
	for i, r := range reqs {
		n := len(r.Messages)
		if isCompaction(r) || n < 2 || !hasResult(r.Messages[n-1]) {
			continue
		}
		if prev := r.Messages[n-2]; prev.Role != llm.RoleAssistant || prev.Blocks[0].Type != llm.BlockThinking {
			t.Errorf("request %d: the latest turn's thinking was not sent back", i)
		}
	}
	t.Logf("%d requests, stats %+v", len(reqs), s.hist.Stats())
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
