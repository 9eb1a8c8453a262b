package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
)

type notices struct{ got []string }

func (n *notices) OnEvent(llm.Event)                             {}
func (n *notices) OnToolStart(llm.Block)                         {}
func (n *notices) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (n *notices) OnReply(*llm.Reply)                            {}
func (n *notices) OnNotice(m notice.Notice)                      { n.got = append(n.got, m.Text) }

func cut(calls ...llm.Block) func(*llm.Request) (*llm.Reply, error) {
	return func(*llm.Request) (*llm.Reply, error) {
		return &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant, Blocks: calls}, StopReason: llm.StopMaxTokens, Usage: llm.Usage{Input: 100, Output: 4096}}, nil
	}
}

// A reply cut by the output limit in the middle of a tool call: nothing is
// run, the model learns why and what to do, the user is told, and a second
// cut raises the limit once within what the model allows.
func TestCutToolCallNotRun(t *testing.T) {
	f := newFixture(t,
		cut(use("1", "write_file", `{"path":"a.txt","content":"part`)),
		cut(use("2", "bash", `{"command":"touch b.txt"}`), use("3", "write_file", `{"path":"a.txt","content":"pa`)),
		text("done in parts"),
	)
	f.agent.o.Model, f.agent.o.MaxTokens = "claude-sonnet-4-5", 4096
	var n notices
	res, err := f.agent.Run(context.Background(), "write a big file", &n)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done in parts" {
		t.Errorf("result %+v", res)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(f.proj, name)); err == nil {
			t.Errorf("%s exists: a call of a cut reply ran", name)
		}
	}
	second := f.prov.reqs[1].Messages
	results := second[len(second)-1].Blocks
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "cut off at the output limit (4096 tokens)") || !strings.Contains(results[0].Content, "edit_file") {
		t.Errorf("result sent back: %+v", results)
	}
	if in := string(second[len(second)-2].Blocks[0].Input); in != `{"cut_off_at_output_limit":true}` {
		t.Errorf("stored input of the cut call = %s", in)
	}
	third := f.prov.reqs[2]
	if third.MaxTokens != 8192 {
		t.Errorf("output limit after two cuts = %d, want 8192", third.MaxTokens)
	}
	if len(n.got) != 3 || !strings.Contains(n.got[0], "cut at 4096 output tokens in the middle of a write_file call") || !strings.Contains(n.got[2], "raised the output limit to 8192") {
		t.Errorf("notices %q", n.got)
	}
}

// An unknown model's limit is never raised: over its maximum is a 400.
func TestCutUnknownModelLimitKept(t *testing.T) {
	f := newFixture(t, cut(use("1", "write_file", `{"path":"a`)), cut(use("2", "write_file", `{"path":"a`)), text("ok"))
	f.agent.o.MaxTokens = 4096
	if _, err := f.agent.Run(context.Background(), "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := f.prov.reqs[2].MaxTokens; got != 4096 {
		t.Errorf("MaxTokens = %d", got)
	}
}

// A refusal is shown as such, and the refused reply is not re-sent.
func TestRefusalNotKept(t *testing.T) {
	f := newFixture(t,
		func(*llm.Request) (*llm.Reply, error) {
			return &llm.Reply{Message: llm.Text(llm.RoleAssistant, "I can't help with that. Partial harmful st"), StopReason: llm.StopRefusal}, nil
		},
		text("sure"),
	)
	var n notices
	res, err := f.agent.Run(context.Background(), "do the bad thing", &n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "I can't help with that.") || len(n.got) != 1 || !strings.Contains(n.got[0], "refused") {
		t.Errorf("result %q, notices %q", res.Text, n.got)
	}
	if _, err := f.agent.Run(context.Background(), "something else", nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.prov.reqs[1].Messages {
		if strings.Contains(m.PlainText(), "Partial harmful") {
			t.Errorf("the refused reply was re-sent: %+v", m)
		}
	}
}
